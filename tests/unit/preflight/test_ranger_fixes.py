"""A missing grant on a side whose ``acls.format`` names ranger: the failing check's fix names the Ranger policy to
add, as render writes it (docs/ranger.md), and the Kafka ACL command only where the side keeps Kafka's ACLs too."""

from __future__ import annotations

import json

from secure_mirror.preflight.checks.acl_fixes import lacking
from secure_mirror.preflight.model import FAIL
from secure_mirror.render import acls, ranger
from tests.support import profiles


def test_a_missing_read_on_a_ranger_source_names_the_rendered_policy(tmp_path):
    profile = profiles.ranger_profile(tmp_path)
    plan = acls.source_acls(profile)
    topic = "orders"
    failed = lacking(plan, "acl.topic-read", plan.need("READ", "TOPIC", [topic]), f"User:mirror may not READ {topic}")
    assert failed.status == FAIL
    rendered = {p["name"]: p for p in ranger.plan_policies(plan, profile).policies}
    [policy] = failed.details["ranger_policies"]
    assert policy["name"] in rendered  # the very policy render writes, by its name
    assert f"add the Ranger policy {policy['name']!r} to the service kafka" in failed.fix
    assert "allow consume to mirror" in failed.fix
    assert "kafka-acls.sh" not in failed.fix  # the source keeps no Kafka ACLs (format: ranger)
    json.dumps(failed.details)


def test_a_side_with_both_formats_names_the_policy_and_the_acl(tmp_path):
    profile = profiles.ranger_profile(tmp_path)
    plan = acls.target_acls(profile)
    name = profile.target_topic("orders")
    failed = lacking(plan, "acl.topic-describe", plan.need("DESCRIBE", "TOPIC", [name]), "may not DESCRIBE")
    assert "to the service cl1_kafka" in failed.fix
    assert "allow describe to mirror" in failed.fix
    assert "with Kafka's ACLs: kafka-acls.sh" in failed.fix


def test_a_kafka_side_keeps_the_acl_command_alone(tmp_path):
    profile = profiles.load(tmp_path, profiles.gssapi(tmp_path, "source"), profiles.gssapi(tmp_path, "target"))
    plan = acls.source_acls(profile)
    failed = lacking(plan, "acl.topic-read", plan.need("READ", "TOPIC", ["orders"]), "may not READ")
    assert "Ranger" not in failed.fix
    assert failed.fix.startswith("grant READ to User:mirror: kafka-acls.sh")
