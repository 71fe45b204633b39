"""An HDP-era source cluster: Kafka 2.2.2 with ZooKeeper, SASL_PLAINTEXT and GSSAPI, ACLs through its
SimpleAclAuthorizer (``sandbox up --old-broker``, secure_mirror/sandbox/old_broker.py), beside the session sandbox.

Such brokers report no authorized operations: pre-flight asks READ by fetching at the end of each topic and group
READ by joining a Spark-shaped group, and says so; it must still name a missing grant. The job then mirrors from it
to the current target cluster, counted on the target.

A second old broker authorizes with Apache Ranger's Kafka authorizer 1.2.0 (``old_broker.start(..., ranger=...)``),
loading the source's rendered Ranger policies from its policy cache: DescribeAcls tells nothing there, so pre-flight
proves by effect what it can and leaves the rest unverified, never passed; with one access removed from a policy the
check fails naming the Ranger policy to add; the job mirrors through it.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight import FAIL, PASS, UNVERIFIED, WARN, run_preflight
from secure_mirror.preflight.probes.api_versions import ask
from secure_mirror.profile import load_profile
from secure_mirror.profile.cluster import Cluster
from secure_mirror.render import acls, ranger
from secure_mirror.sandbox import old_broker
from secure_mirror.sandbox.ranger import RangerPolicyCache
from tests.support.cluster import assert_same_records, plain_records, preflight_old_source

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
CLI = [sys.executable, "-m", "secure_mirror"]


@pytest.fixture
def case(sandbox, old_bootstrap, tmp_path):
    """A profile from the old broker to the sandbox's target, its own topics, the rendered ACLs granted."""
    prefix = f"h{uuid.uuid4().hex[:8]}"
    data = old_broker.profile_dict(sandbox, old_bootstrap)
    data["mirror"]["topics"]["include"] = f"{prefix}\\..*"
    data["mirror"]["checkpoint_location"] = str(tmp_path / "checkpoint")
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    profile = load_profile(path)
    admin = old_broker.identity(sandbox, "admin")
    source_acls = acls.source_acls(profile).bindings
    target_acls = acls.target_acls(profile).bindings
    target_acls = [
        *target_acls,
        Acl(
            principal=target_acls[0].principal,
            operation="READ",
            resource_type="TOPIC",
            resource_name=profile.target_topic(f"{prefix}."),
            pattern_type="PREFIXED",
        ),
    ]
    admin.call(admin_ops.create_topics, {f"{prefix}.a": 2})
    admin.call(admin_ops.create_acls, source_acls)
    sandbox.admin("target", admin_ops.create_acls, target_acls)
    yield {"path": path, "profile": profile, "admin": admin, "topic": f"{prefix}.a", "source_acls": source_acls}
    admin.call(admin_ops.delete_acls, source_acls)
    sandbox.admin("target", admin_ops.delete_acls, target_acls)
    admin.call(admin_ops.delete_topics, [f"{prefix}.a"])
    mine = [t for t in sandbox.admin("target", admin_ops.list_topics) if prefix in t]
    if mine:
        sandbox.admin("target", admin_ops.delete_topics, mine)


def test_the_broker_is_an_old_line_by_its_api_versions(old_bootstrap):
    host, port = old_bootstrap.rsplit(":", 1)
    apis = ask(host, int(port), None, 10)
    assert apis.line == "a Kafka older than 2.3" and not apis.write_allows_idempotence


def test_preflight_asks_an_old_source_by_fetching_and_joining(case):
    report = preflight_old_source(case["profile"])
    for check_id in ("source.acl.topic-read", "source.acl.group-read"):
        check = report.get(check_id)
        assert check.status == PASS and "older than Kafka 2.3" in check.finding, report.to_json()
    assert report.get("source.acl.topic-describe").status == PASS
    assert report.get("source.java.client").status == PASS, report.to_json()
    assert "not reported" in report.get("source.java.client").finding
    assert report.ok(accept_unverified=True), report.to_json()  # only WRITE on the topic still to create is open


@pytest.mark.parametrize(
    "operation, resource_type, check_id",
    [("READ", "TOPIC", "source.acl.topic-read"), ("READ", "GROUP", "source.acl.group-read")],
)
def test_a_missing_grant_on_an_old_broker_is_named(case, operation, resource_type, check_id):
    removed = [a for a in case["source_acls"] if a.operation == operation and a.resource_type == resource_type]
    case["admin"].call(admin_ops.delete_acls, removed)
    try:
        report = run_preflight(case["profile"], sides=("source",))
    finally:
        case["admin"].call(admin_ops.create_acls, removed)
    check = report.get(check_id)
    assert check.status == FAIL, report.to_json()
    if resource_type == "TOPIC":  # asked by a fetch; a group without READ (nor DESCRIBE) refuses DescribeGroups itself
        assert "older than Kafka 2.3" in check.finding, report.to_json()
    assert check.acls and check.acls[0].operation == operation and check.acls[0].resource_type == resource_type


def _mirrors_and_verifies(sandbox, case: dict, tmp_path) -> None:
    """The job mirrors the case's 40 records until caught up; our verify and confluent-kafka's readers agree."""
    run = subprocess.run(
        [
            *CLI,
            "run",
            str(case["path"]),
            "--until-caught-up",
            "--accept-unverified",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    verify = subprocess.run([*CLI, "verify", str(case["path"])], capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stdout[-3000:] + verify.stderr[-3000:]
    target = case["profile"].target_topic(case["topic"])
    assert "40" in verify.stdout and target in verify.stdout
    # judged by confluent-kafka readers too, not only by our own verify
    assert_same_records(case["admin"], sandbox.identity("target", "admin"), case["topic"], target, 40)


def test_the_job_mirrors_from_the_old_broker_to_the_current_cluster(sandbox, case, tmp_path):
    case["admin"].call(
        admin_ops.produce, case["topic"], [dict(r, partition=i % 2) for i, r in enumerate(plain_records(40, "old"))]
    )
    _mirrors_and_verifies(sandbox, case, tmp_path)


def test_sandbox_status_and_down_cover_the_old_broker(sandbox, old_bootstrap):
    summary = sandbox.summary()
    assert summary["old_broker"]["bootstrap"] == old_bootstrap
    assert summary["processes"]["old-broker"] and summary["processes"]["old-zookeeper"]
    assert Path(summary["old_broker"]["profile"]).exists()


RANGER_FOLDER = "old-broker-ranger"
RANGER_SERVICE = "old_kafka"


@pytest.fixture(scope="module")
def ranger_case(sandbox, tmp_path_factory):
    """The old broker authorized by Ranger, with the policies render writes for a profile mirroring from it (the
    source's acls.format: ranger); that profile's topic holds 40 records; the target's ACLs granted."""
    tmp = tmp_path_factory.mktemp("ranger")
    prefix = f"r{uuid.uuid4().hex[:8]}"

    def profile_at(bootstrap: str):
        data = old_broker.profile_dict(sandbox, bootstrap)
        data["source"]["acls"] = {"format": "ranger", "ranger_service": RANGER_SERVICE}
        data["mirror"]["topics"]["include"] = f"{prefix}\\..*"
        data["mirror"]["checkpoint_location"] = str(tmp / "checkpoint")
        path = tmp / "profile.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path, load_profile(path)

    _, draft = profile_at("kafka.source.test:9")  # the policies do not depend on the address
    policies = ranger.plan_policies(acls.source_acls(draft), draft).policies
    broker = old_broker.start(sandbox, ranger=RangerPolicyCache(RANGER_SERVICE, policies), folder=RANGER_FOLDER)
    try:
        path, profile = profile_at(broker.bootstrap)
        admin = old_broker.identity(sandbox, "admin", RANGER_FOLDER)
        topic = f"{prefix}.a"
        admin.call(admin_ops.create_topics, {topic: 2})
        admin.call(admin_ops.produce, topic, [dict(r, partition=i % 2) for i, r in enumerate(plain_records(40, "rg"))])
        target_acls = acls.target_acls(profile).bindings
        target_acls = [
            *target_acls,
            Acl(
                principal=target_acls[0].principal,
                operation="READ",
                resource_type="TOPIC",
                resource_name=profile.target_topic(f"{prefix}."),
                pattern_type="PREFIXED",
            ),
        ]
        sandbox.admin("target", admin_ops.create_acls, target_acls)
        try:
            yield {
                "broker": broker,
                "path": path,
                "profile": profile,
                "admin": admin,
                "topic": topic,
                "policies": policies,
            }
        finally:
            sandbox.admin("target", admin_ops.delete_acls, target_acls)
            mine = [t for t in sandbox.admin("target", admin_ops.list_topics) if prefix in t]
            if mine:
                sandbox.admin("target", admin_ops.delete_topics, mine)
    finally:
        old_broker.stop(sandbox.base, RANGER_FOLDER)


def test_ranger_decides_on_the_old_broker(sandbox, ranger_case):
    """No Kafka ACL exists on this broker: the mirror's user reads the topic because a Ranger policy allows it, and
    is refused writing it (no policy allows publish)."""
    mirror = old_broker.identity(sandbox, "mirror", RANGER_FOLDER)
    assert len(mirror.call(admin_ops.consume, ranger_case["topic"], max_records=1, timeout=20)) == 1
    with pytest.raises(Exception, match="AUTHORIZATION_FAILED"):
        mirror.call(admin_ops.produce, ranger_case["topic"], [{"value": b"x"}], 20)


def test_preflight_on_a_ranger_source_passes_only_what_it_proved(ranger_case):
    report = preflight_old_source(ranger_case["profile"], sides=("source",))
    read, group = report.get("source.acl.topic-read"), report.get("source.acl.group-read")
    assert read.status == PASS and "asked by fetching" in read.finding, report.to_json()
    assert group.status == PASS and "asked by joining" in group.finding, report.to_json()
    assert report.get("source.acl.topic-describe").status == PASS, report.to_json()
    configs = report.get("source.acl.topic-configs")  # asked by a DescribeConfigs the authorizer answered
    assert configs.status == PASS and "asked by describing their configs" in configs.finding, report.to_json()
    proven_by = ("may DESCRIBE", "asked by fetching", "asked by joining", "asked by describing their configs")
    for check in report.checks:
        if check.id.startswith("source.acl.") and check.status == PASS:
            assert any(words in check.finding for words in proven_by), check.finding


def test_the_admin_audit_on_a_ranger_broker_concludes_nothing(sandbox, ranger_case):
    """--as-admin: Ranger's authorizer answers DescribeAcls with an empty list; the audit says its grants are not
    visible there and judges nothing from it (no pass, no fail drawn from an empty answer)."""
    data = old_broker.profile_dict(sandbox, ranger_case["broker"].bootstrap)["source"]
    side = sandbox.sides["source"]
    data["sasl"].update({"principal": side.admin_principal, "keytab": str(sandbox.keytab("source", "admin"))})
    report = run_preflight(ranger_case["profile"], sides=("source",), admin={"source": Cluster.model_validate(data)})
    audit = [c for c in report.checks if ".audit." in c.id]
    assert [(c.id, c.status) for c in audit] == [("source.audit.acls", UNVERIFIED)], report.to_json()
    assert "Ranger" in audit[0].fix and "not judged" in audit[0].finding, audit[0]


def test_a_policy_missing_one_access_fails_naming_the_ranger_policy(ranger_case):
    """consume and describe_configs removed from the topic policy (describe kept, so the topic is still seen):
    topic-read fails, topic-configs warns (the job runs without copying configs), and each fix names the rendered
    policy and the access to add."""
    policies = copy.deepcopy(ranger_case["policies"])
    [topic_policy] = [p for p in policies if "topic" in p["resources"] and p["resources"]["topic"]["values"][0] != "*"]
    for item in topic_policy["policyItems"]:
        item["accesses"] = [a for a in item["accesses"] if a["type"] not in ("consume", "describe_configs")]
    broker = ranger_case["broker"]
    old_broker.reload_ranger(broker, RangerPolicyCache(RANGER_SERVICE, policies))
    try:
        report = run_preflight(ranger_case["profile"], sides=("source",))
    finally:
        old_broker.reload_ranger(broker, RangerPolicyCache(RANGER_SERVICE, ranger_case["policies"]))
    check = report.get("source.acl.topic-read")
    assert check.status == FAIL, report.to_json()
    assert "may not READ" in check.finding and ranger_case["topic"] in check.finding, check.finding
    assert f"add the Ranger policy {topic_policy['name']!r} to the service {RANGER_SERVICE}" in check.fix, check.fix
    assert "allow consume to mirror" in check.fix, check.fix
    configs = report.get("source.acl.topic-configs")
    assert configs.status == WARN and "may not DESCRIBE_CONFIGS" in configs.finding, report.to_json()
    assert f"{topic_policy['name']!r}" in configs.fix and "allow describe_configs to mirror" in configs.fix


def test_the_job_mirrors_through_ranger(sandbox, ranger_case, tmp_path):
    _mirrors_and_verifies(sandbox, ranger_case, tmp_path)
