"""``mirror.groups`` in pre-flight (``preflight/checks/groups.py``) and in the audit, fed answer dicts as the probes
return them: exact checks, findings and the grants named from the side's ACL plan; nothing it cannot ask passes."""

from __future__ import annotations

import pytest

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.checks import groups
from secure_mirror.preflight.checks.audit import audit_checks
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, UNVERIFIED, Check
from secure_mirror.render import acls as acl_plans
from tests.support import profiles as pf
from tests.unit.preflight.conftest import SOURCE_BROKER, TARGET_BROKER, acl, commands, grant_fix

SAMPLE = "billingsecure-mirror-preflight"  # the name asked about for the prefix billing.*
MAP, CHECKPOINTS = "secure_mirror.offset-map.src.internal", "src.checkpoints.internal"
ABSENT = {"error": "UNKNOWN_TOPIC_OR_PART"}
MAY = {"operations": ["DESCRIBE", "READ", "WRITE"]}


@pytest.fixture
def synced(tmp_path):
    return pf.load(tmp_path, groups={"include": "app\\.orders,billing.*"})


def described(app: dict, billing: dict | None = None) -> dict[str, dict]:
    return {"app.orders": app, SAMPLE: billing or app}


def test_the_source_may_describe_the_groups(synced):
    plan = acl_plans.source_acls(synced)
    found = groups.source_check(synced, plan, described({"operations": ["DESCRIBE"]}))
    assert found == Check(
        "source.acl.group-describe",
        PASS,
        "User:mirror may DESCRIBE the consumer groups mirror.groups syncs (app.orders, billing*)",
    )


def test_a_group_the_source_refuses_fails_with_the_plans_grant(synced):
    plan = acl_plans.source_acls(synced)
    found = groups.source_check(
        synced, plan, described({"operations": ["DESCRIBE"]}, {"error": "GROUP_AUTHORIZATION_FAILED"})
    )
    grant = [acl("DESCRIBE", "GROUP", "billing", "PREFIXED")]
    assert found == Check(
        "source.acl.group-describe",
        FAIL,
        "User:mirror may not DESCRIBE the consumer groups mirror.groups syncs (billing*): the mirror could not fetch "
        "their committed offsets",
        grant_fix("DESCRIBE", grant, SOURCE_BROKER),
        acls=grant,
        commands=commands(grant, SOURCE_BROKER),
        details={"resources": [SAMPLE]},
    )


AGAIN = "run pre-flight again once every target broker answers (target.kafka.brokers names those that do not), or "


@pytest.mark.parametrize(
    ("answer", "why", "fix", "resources"),
    [
        (
            {"operations": None},
            "no authorized operations reported (brokers before Kafka 2.3)",
            PROVE_WITH_AUDIT,
            ["app.orders", SAMPLE],
        ),
        (
            {"error": "COORDINATOR_NOT_AVAILABLE"},
            "the brokers gave no answer (COORDINATOR_NOT_AVAILABLE)",
            AGAIN + PROVE_WITH_AUDIT,
            sorted(["app.orders", SAMPLE]),
        ),
    ],
)
def test_a_group_permission_it_cannot_ask_is_unverified_never_a_pass(synced, answer, why, fix, resources):
    plan = acl_plans.target_acls(synced)
    found = groups.group_check(synced, plan, "READ", described(answer), "commit")
    assert found == Check(
        "target.acl.group-read",
        UNVERIFIED,
        f"whether User:mirror may READ the consumer groups app.orders, billing* is not known: {why}",
        fix,
        proven_by="target.audit.group-read",
        details={"resources": resources},
    )


def test_describe_without_read_on_the_target_fails_naming_read(synced):
    plan = acl_plans.target_acls(synced)
    found = groups.group_check(synced, plan, "READ", described({"operations": ["DESCRIBE"]}), "commit them")
    assert found.status == FAIL and found.acls == [
        acl("READ", "GROUP", "app.orders"),
        acl("READ", "GROUP", "billing", "PREFIXED"),
    ]


def _target(synced, exists, to_create, topics, created, group=None, said=()) -> dict[str, Check]:
    plan = acl_plans.target_acls(synced)
    answer = {"groups": described(group or MAY), "topics": topics, "created": created, "said": list(said)}
    return {c.id: c for c in groups.target_checks(synced, plan, exists, to_create, answer)}


def test_a_first_run_leaves_write_and_read_on_the_topics_to_create_unverified(synced):
    checks = _target(
        synced,
        {"src.payments": MAY},
        ["src.orders.eu"],
        {MAP: ABSENT, CHECKPOINTS: ABSENT},
        {MAP: None, CHECKPOINTS: None},
    )
    assert checks["target.acl.group-read"].status == PASS
    assert checks["target.acl.topic-read"] == Check(
        "target.acl.topic-read",
        UNVERIFIED,
        f"READ on 3 target topic(s) ({MAP}, {CHECKPOINTS}, src.orders.eu) cannot be asked: they are still to create, "
        "or the brokers (older than Kafka 2.3) report no authorized operations",
        PROVE_WITH_AUDIT,
        proven_by="target.audit.topic-read",
        details={"resources": [MAP, CHECKPOINTS, "src.orders.eu"]},
    )
    assert checks["target.acl.group-topics"] == Check(
        "target.acl.group-topics",
        UNVERIFIED,
        f"User:mirror may DESCRIBE and CREATE the topics mirror.groups needs; WRITE on {MAP}, {CHECKPOINTS} cannot be "
        "asked before they exist (or the brokers report no authorized operations)",
        PROVE_WITH_AUDIT,
        proven_by="target.audit.topic-write",
        details={"resources": [MAP, CHECKPOINTS]},
    )


def test_existing_topics_with_every_grant_pass(synced):
    checks = _target(
        synced, {"src.payments": MAY}, [], {MAP: {"partitions": 1, **MAY}, CHECKPOINTS: {"partitions": 1, **MAY}}, {}
    )
    assert {c.status for c in checks.values()} == {PASS}


def test_a_target_topic_without_read_fails(synced):
    checks = _target(
        synced, {"src.payments": {"operations": ["DESCRIBE", "WRITE"]}}, [], {MAP: MAY, CHECKPOINTS: MAY}, {}
    )
    assert checks["target.acl.topic-read"].status == FAIL
    assert checks["target.acl.topic-read"].acls == [acl("READ", "TOPIC", "src.payments")]


@pytest.mark.parametrize(
    ("topics", "created", "operation"),
    [
        (
            {MAP: {"error": "TOPIC_AUTHORIZATION_FAILED"}, CHECKPOINTS: MAY},
            {MAP: "TOPIC_AUTHORIZATION_FAILED"},
            "DESCRIBE",
        ),
        ({MAP: ABSENT, CHECKPOINTS: MAY}, {MAP: "TOPIC_AUTHORIZATION_FAILED"}, "CREATE"),
        ({MAP: {"operations": ["DESCRIBE", "READ"]}, CHECKPOINTS: MAY}, {}, "WRITE"),
    ],
)
def test_a_missing_grant_on_the_offset_map_fails_naming_it(synced, topics, created, operation):
    check = _target(synced, {}, [], topics, created)["target.acl.group-topics"]
    assert check.status == FAIL and check.acls == [acl(operation, "TOPIC", MAP)]
    assert check.finding.startswith(f"User:mirror may not {operation} {MAP}, the topic(s) the mirror keeps")
    assert check.commands == commands(check.acls, TARGET_BROKER)


SAID = ["sasl_ssl://kafka-3.target.test:9095/3: Connect to ipv4#127.0.0.1:9095 failed: Connection refused"]
NOT_ASKED = (
    "the brokers gave no answer (_TRANSPORT); this identity could not ask broker 3 (kafka-3.target.test:9095): Connect "
    "to ipv4#127.0.0.1:9095 failed: Connection refused"
)
AGAIN = "run pre-flight again once every target broker answers (target.kafka.brokers names those that do not), or "


def test_a_broker_away_leaves_the_groups_and_their_topics_unverified_naming_it_not_refused(synced):
    """Issue 58, point 7: the coordinator of the groups and the controller asked to create the offset map could not
    be reached (_TRANSPORT): no grant is named missing, the broker is named (its words are librdkafka's)."""
    checks = _target(
        synced,
        {"src.payments": MAY},
        [],
        {MAP: ABSENT, CHECKPOINTS: {"partitions": 1, **MAY}},
        {MAP: "_TRANSPORT"},
        group={"error": "_TRANSPORT"},
        said=SAID,
    )
    assert checks["target.acl.group-read"] == Check(
        "target.acl.group-read",
        UNVERIFIED,
        f"whether User:mirror may READ the consumer groups app.orders, billing* is not known: {NOT_ASKED}",
        AGAIN + PROVE_WITH_AUDIT,
        proven_by="target.audit.group-read",
        details={"resources": sorted(["app.orders", SAMPLE])},
    )
    assert checks["target.acl.group-topics"] == Check(
        "target.acl.group-topics",
        UNVERIFIED,
        f"whether User:mirror may CREATE {MAP}, the topic(s) the mirror keeps for mirror.groups (its offset map; "
        f"checkpoints in MirrorMaker 2's format) is not known: {NOT_ASKED}",
        AGAIN + PROVE_WITH_AUDIT,
        proven_by="target.audit.topic-create",
        details={"resources": [MAP]},
    )
    # for contrast: the authorizer's refusal of the same requests fails, with the grants
    refused = _target(
        synced,
        {"src.payments": MAY},
        [],
        {MAP: ABSENT, CHECKPOINTS: {"partitions": 1, **MAY}},
        {MAP: "TOPIC_AUTHORIZATION_FAILED"},
        group={"error": "GROUP_AUTHORIZATION_FAILED"},
        said=SAID,
    )
    assert refused["target.acl.group-read"].status == FAIL and refused["target.acl.group-read"].acls
    assert refused["target.acl.group-topics"].acls == [acl("CREATE", "TOPIC", MAP)]


# ---- the audit ------------------------------------------------------------------------------------------------------
def _granted(plan: acl_plans.AclPlan) -> list[Acl]:
    return list(plan.bindings)


def test_the_rendered_grants_pass_both_audits(synced):
    for side, plan in (("source", acl_plans.source_acls(synced)), ("target", acl_plans.target_acls(synced))):
        found = audit_checks(synced, side, {"topics": {"orders.eu": 1}, "acls": _granted(plan)}, {"orders.eu": 1}, "h")
        assert [c.id for c in found if c.status != PASS] == [], found
        ids = [c.id for c in found]
        assert len(ids) == len(set(ids))  # one check per operation and resource type
        if side == "source":
            assert "source.audit.group-describe" in ids
        else:
            assert {"target.audit.group-read", "target.audit.topic-read", "target.audit.topic-write"} <= set(ids)


def test_the_audit_fails_a_removed_group_grant_and_names_it(synced):
    plan = acl_plans.target_acls(synced)
    acls = [a for a in plan.bindings if not (a.resource_type == "GROUP" and a.resource_name == "billing")]
    found = {c.id: c for c in audit_checks(synced, "target", {"topics": {}, "acls": acls}, {"orders.eu": 1}, "h")}
    read = found["target.audit.group-read"]
    assert read.status == FAIL and read.acls == [acl("READ", "GROUP", "billing", "PREFIXED")]
    assert found["target.audit.group-describe"].acls == [acl("DESCRIBE", "GROUP", "billing", "PREFIXED")]


def test_without_groups_the_audit_asks_nothing_of_them(profile):
    plan = acl_plans.target_acls(profile)
    found = audit_checks(profile, "target", {"topics": {}, "acls": plan.bindings}, {"orders.eu": 1}, "h")
    assert "target.audit.topic-read" not in {c.id for c in found}
