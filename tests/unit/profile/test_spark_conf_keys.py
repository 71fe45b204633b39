"""mirror.spark.conf: the keys the profile owns are refused; the caches of Spark's Kafka connector may be tuned."""

from __future__ import annotations

import pytest

from secure_mirror.profile import ProfileError, load_profile
from tests.support.profiles import gssapi, profile_data, write_profile

REFUSED = [
    "spark.jars",
    "spark.kafka.clusters.source.sasl.token.mechanism",
    "spark.kafka.clusters.x.kafka.sasl.jaas.config",
    "spark.kafka.consumer.cache",  # not a cache setting: the prefix without a key under it
    "spark.kafka.producer.cacheX.timeout",
    "spark.kafka.anything",
]
ALLOWED = [
    "spark.kafka.consumer.cache.capacity",
    "spark.kafka.consumer.cache.timeout",
    "spark.kafka.consumer.fetchedData.cache.timeout",
    "spark.kafka.producer.cache.timeout",
    "spark.jars.ivy",  # not spark.jars itself (an Ivy home folder; spark.jars.ivySettings loads code: code_loading)
]


def _load(tmp_path, key: str):
    data = profile_data(tmp_path, gssapi(tmp_path, "source"), gssapi(tmp_path, "target"))
    data["mirror"]["spark"] = {"conf": {key: "4096"}}
    return load_profile(write_profile(tmp_path, data))


@pytest.mark.parametrize("key", REFUSED)
def test_security_bearing_spark_kafka_keys_are_refused(tmp_path, key):
    with pytest.raises(ProfileError, match="rendered from the profile"):
        _load(tmp_path, key)


@pytest.mark.parametrize("key", ALLOWED)
def test_connector_cache_keys_can_be_tuned(tmp_path, key):
    assert _load(tmp_path, key).mirror.spark.conf[key] == "4096"
