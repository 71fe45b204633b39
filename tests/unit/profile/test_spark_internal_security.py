"""Spark's own connections on YARN: render turns on authentication and AES encryption of driver <-> executor
traffic and spill files (the job's Kafka options travel to executors over them), and a profile cannot turn them
off there; on other masters the cluster's operators own the shared secret, so nothing is added."""

from __future__ import annotations

import pytest

from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.profile.models import SPARK_INTERNAL_SECURITY
from secure_mirror.render.spark import spark_conf
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
