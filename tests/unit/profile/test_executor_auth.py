"""executor_auth: delegation_token is accepted where Spark's Kafka token support serves it (GSSAPI, YARN client
mode, a hadoop section) and refused elsewhere with the field and the fix."""

from __future__ import annotations

import pytest

from secure_mirror.profile import ProfileError, load_profile
from tests.support.profiles import password, profile_data, write_profile

HADOOP = {"properties": {"core-site.xml": {"fs.defaultFS": "hdfs://nn.source.test:8020"}}}


def _yarn(tmp_path, deploy_mode: str = "client", **sides) -> dict:
    data = profile_data(tmp_path, spark={"master": "yarn", "deploy_mode": deploy_mode}, **sides)
    data["hadoop"] = {
        **HADOOP,
        "principal": "mirror/mirror.source.test@SOURCE.TEST",
        "keytab": str(tmp_path / "source" / "mirror.keytab"),
    }
    return data


def _problems(tmp_path, data: dict) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, data))
    return caught.value.problems


def test_default_is_keytab_and_yarn_client_with_gssapi_takes_tokens(tmp_path):
    data = _yarn(tmp_path)
    assert load_profile(write_profile(tmp_path, data)).source.executor_auth == "keytab"
    data["source"]["executor_auth"] = data["target"]["executor_auth"] = "delegation_token"
    profile = load_profile(write_profile(tmp_path, data))
    assert profile.uses_delegation_tokens and profile.target.executor_auth == "delegation_token"


def test_a_local_master_is_refused_with_the_field_and_the_fix(tmp_path):
    data = profile_data(tmp_path)
    data["target"]["executor_auth"] = "delegation_token"
    assert _problems(tmp_path, data) == [
        "target.executor_auth: delegation_token needs mirror.spark.master: yarn (Spark obtains and hands out Kafka "
        "tokens only on YARN and Kubernetes; here the master is local[2]); use executor_auth: keytab"
    ]


def test_cluster_mode_and_a_password_identity_are_refused_both_named(tmp_path):
    data = _yarn(tmp_path, "cluster", target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["source"]["executor_auth"] = data["target"]["executor_auth"] = "delegation_token"
    (problem,) = _problems(tmp_path, data)
    assert problem.startswith("source.executor_auth: delegation_token needs mirror.spark.deploy_mode: client")
    assert "; target.executor_auth: delegation_token needs a GSSAPI identity" in problem
    assert "use sasl.mechanism GSSAPI or executor_auth: keytab" in problem


def test_without_a_hadoop_section_it_is_refused(tmp_path):
    data = _yarn(tmp_path)
    del data["hadoop"]
    data["source"]["executor_auth"] = "delegation_token"
    (problem,) = _problems(tmp_path, data)
    assert problem.startswith("source.executor_auth: delegation_token needs the hadoop section")


def test_an_unknown_value_names_the_choices(tmp_path):
    data = _yarn(tmp_path)
    data["source"]["executor_auth"] = "token"
    (problem,) = _problems(tmp_path, data)
    assert problem.startswith("source.executor_auth:") and "delegation_token" in problem
