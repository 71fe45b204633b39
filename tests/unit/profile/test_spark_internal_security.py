"""Spark's own connections on YARN: render turns on authentication and AES encryption of driver <-> executor
traffic and spill files (the job's Kafka options travel to executors over them), and a profile cannot turn them
off there; on other masters the cluster's operators own the shared secret, so nothing is added, and the job checks
the running context's configuration before any task (unless the profile accepts clear text). A secret never goes
into mirror.spark.conf (it would be written into spark-submit.sh and its argument list)."""

from __future__ import annotations

import pytest

from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.profile.runtime import SPARK_INTERNAL_SECURITY
from secure_mirror.render.job_file import job_settings
from secure_mirror.render.spark import spark_conf
from secure_mirror.run.job.cluster_security import cluster_security_problem
from tests.support.profiles import profile_data, write_profile


def _profile(tmp_path, **spark):
    return load_profile(write_profile(tmp_path, profile_data(tmp_path, spark=spark)))


def test_yarn_gets_authentication_and_encryption(tmp_path):
    conf = spark_conf(_profile(tmp_path, master="yarn"), tmp_path / "out")
    assert {key: conf[key] for key in SPARK_INTERNAL_SECURITY} == {
        "spark.authenticate": "true",
        "spark.network.crypto.enabled": "true",
        "spark.io.encryption.enabled": "true",
    }


@pytest.mark.parametrize("key", ["spark.authenticate", "spark.network.crypto.enabled", "SPARK.IO.ENCRYPTION.ENABLED"])
def test_yarn_refuses_a_profile_turning_them_off_naming_the_field(tmp_path, key):
    with pytest.raises(ProfileError) as caught:
        _profile(tmp_path, master="yarn", conf={key: False})
    (problem,) = caught.value.problems
    assert problem.startswith(f"mirror.spark.conf.{key}: on YARN secure-mirror turns on Spark's authentication")
    assert problem.endswith("remove the setting")


@pytest.mark.parametrize("master", ["local[2]", "spark://127.0.0.1:7077", "k8s://https://127.0.0.1:6443"])
def test_other_masters_get_nothing_added_and_keep_the_profiles_choice(tmp_path, master):
    conf = spark_conf(_profile(tmp_path, master=master), tmp_path / "out")
    assert not set(conf) & set(SPARK_INTERNAL_SECURITY)
    chosen = spark_conf(_profile(tmp_path, master=master, conf={"spark.authenticate": True}), tmp_path / "out")
    assert chosen["spark.authenticate"] == "true" and "spark.network.crypto.enabled" not in chosen


@pytest.mark.parametrize(
    ("master", "accept", "checked"),
    [
        ("spark://127.0.0.1:7077", None, True),
        ("k8s://https://127.0.0.1:6443", None, True),
        ("spark://127.0.0.1:7077", False, False),
        ("yarn", None, False),  # render turns the settings on itself
        ("local[2]", None, False),  # executors in the driver's JVM
    ],
)
def test_the_job_is_told_to_check_the_cluster_where_operators_own_the_secret(tmp_path, master, accept, checked):
    spark = {"master": master} | ({} if accept is None else {"require_encrypted_cluster": accept})
    assert job_settings(_profile(tmp_path, **spark)).check_cluster_security is checked


@pytest.mark.parametrize(
    ("settings", "missing"),
    [
        ({}, "spark.authenticate=true and spark.network.crypto.enabled=true missing"),
        ({"spark.authenticate": "true"}, "(spark.network.crypto.enabled=true missing)"),
        ({"spark.network.crypto.enabled": "true"}, "(spark.authenticate=true missing)"),
        ({"spark.authenticate": "false", "spark.network.crypto.enabled": "true"}, "(spark.authenticate=true missing)"),
        ({"spark.authenticate": "yes", "spark.network.crypto.enabled": "true"}, "(spark.authenticate=true missing)"),
        ({"spark.authenticate": "true", "spark.network.crypto.enabled": "TRUE"}, None),
        ({"spark.authenticate": "true", "spark.authenticate.enableSaslEncryption": "true"}, None),
        ({"spark.authenticate": "true", "spark.ssl.rpc.enabled": "true"}, None),
    ],
)
def test_the_jobs_check_names_what_is_missing(settings, missing):
    problem = cluster_security_problem("spark://h:7077", settings.get)
    if missing is None:
        assert problem is None
    else:
        assert problem.startswith("the Spark cluster at spark://h:7077 does not authenticate and encrypt"), problem
        assert missing in problem and problem.endswith("mirror.spark.require_encrypted_cluster: false"), problem
        assert "spark-defaults.conf on its master, its workers" in problem


def test_on_kubernetes_the_check_says_spark_makes_the_secret_and_the_profile_may_turn_it_on():
    problem = cluster_security_problem("k8s://https://h:6443", {"spark.authenticate": "true"}.get)
    assert "(spark.network.crypto.enabled=true missing)" in problem, problem
    assert "on Kubernetes Spark makes the secret for each application" in problem and "workers" not in problem


@pytest.mark.parametrize(
    "key",
    [
        "spark.authenticate.secret",
        "spark.ssl.keyStorePassword",
        "spark.ssl.rpc.trustStorePassword",
        "spark.hadoop.fs.s3a.secret.key",
        "spark.hadoop.fs.s3a.access.key",
        "spark.kubernetes.authenticate.submission.oauthToken",
    ],
)
def test_a_secret_in_spark_conf_is_refused_naming_the_field_and_where_it_belongs(tmp_path, key):
    with pytest.raises(ProfileError) as caught:
        _profile(tmp_path, conf={key: "hunter2-value"})
    (problem,) = caught.value.problems
    assert problem.startswith(f"mirror.spark.conf.{key}: names a secret"), problem
    assert "spark-defaults.conf" in problem and "hunter2-value" not in problem


@pytest.mark.parametrize(
    "key",
    [
        "spark.hadoop.dfs.block.access.token.enable",
        "spark.authenticate.secretBitLength",
        "spark.ssl.enabled",
        "spark.kerberos.renewal.credentials",
    ],
)
def test_settings_about_secrets_that_hold_none_pass(tmp_path, key):
    assert spark_conf(_profile(tmp_path, conf={key: "keytab"}), tmp_path / "out")[key] == "keytab"
