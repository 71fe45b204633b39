"""The old broker's Ranger option (secure_mirror/sandbox/old_broker.py): the policy cache Ranger's Kafka plugin 1.2.0
loads, and bad input as a sentence. The broker itself runs in tests/integration/test_old_broker.py."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from secure_mirror import paths
from secure_mirror.errors import BadInputError
from secure_mirror.sandbox import old_broker, ranger

POLICY = {
    "service": "cl1_kafka",
    "name": "secure-mirror-a-b source topic t.*",
    "resources": {"topic": {"values": ["t.*"], "isExcludes": False, "isRecursive": False}},
    "policyItems": [{"accesses": [{"type": "consume", "isAllowed": True}], "users": ["mirror"]}],
}


def test_rendered_policies_are_read_with_their_service(tmp_path):
    path = tmp_path / "source.policies.json"
    path.write_text(json.dumps([POLICY]))
    cache = ranger.RangerPolicyCache.from_file(path)
    assert cache.service == "cl1_kafka"
    assert cache.policies == [POLICY]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("not json", "cannot read Ranger policies"),
        ('{"policies": []}', "is not a JSON list of Ranger policies"),
        (json.dumps([POLICY, {**POLICY, "service": "other"}]), "several Ranger services"),
    ],
)
def test_bad_policy_files_are_refused_with_a_sentence(tmp_path, text, said):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(BadInputError, match=said):
        ranger.RangerPolicyCache.from_file(path)


@pytest.mark.skipif(
    not any(paths.ranger_kafka_lib_dir().glob("ranger-plugins-common-*.jar")), reason="scripts/setup not run"
)
def test_the_cache_holds_the_policies_the_brokers_own_and_the_plugins_service_definition(tmp_path):
    cache = ranger.RangerPolicyCache("cl1_kafka", [POLICY]).service_policies()
    assert cache["serviceName"] == "cl1_kafka"
    assert cache["serviceDef"]["name"] == "kafka"
    names = [p["name"] for p in cache["policies"]]
    assert names == ["brokers topic", "brokers transactionalid", POLICY["name"]]
    assert [p["id"] for p in cache["policies"]] == [1, 2, 3]
    assert cache["policies"][0]["policyItems"][0]["users"] == ["kafka", "admin"]


def _broker(base, ranger):
    return old_broker.OldBroker(base, "kafka.source.test", "SOURCE.TEST", 1, 2, base / "k", base / "c", ranger)


def test_the_plugin_configuration_names_the_service_and_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(ranger.RangerPolicyCache, "service_policies", lambda self: {"serviceName": self.service})
    broker = _broker(tmp_path, ranger.RangerPolicyCache("cl1_kafka", [POLICY]))
    broker.write_ranger()
    root = ET.parse(tmp_path / "ranger" / "ranger-kafka-security.xml").getroot()
    props = {p.findtext("name"): p.findtext("value") for p in root}
    assert props["ranger.plugin.kafka.service.name"] == "cl1_kafka"
    assert props["ranger.plugin.kafka.policy.cache.dir"] == str(tmp_path / "ranger" / "policycache")
    assert (tmp_path / "ranger" / "policycache" / "kafka_cl1_kafka.json").exists()
    assert "xasecure.audit.is.enabled" in (tmp_path / "ranger" / "ranger-kafka-audit.xml").read_text()
    assert str(paths.ranger_kafka_lib_dir()) in broker._classpath()
