"""mirror.topic_shape as pure decisions: the configs copied and synced, partition growth, the profile field, the
grants render adds (and not when off), pre-flight's judgement of the permissions and counts, the audit's needs and
verify's report of partition counts."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import topic_shape as shape_checks
from secure_mirror.preflight.model import FAIL, PASS, UNVERIFIED, WARN
from secure_mirror.profile import ProfileError
from secure_mirror.profile.mirror import grows_partitions
from secure_mirror.profile.topic_shape import (
    MM2_EXCLUDED_CONFIGS,
    ConfigChange,
    ConfigEntry,
    config_changes,
    configs_to_copy,
    excluded,
    partition_growth,
    partition_problem,
)
from secure_mirror.render import acls
from secure_mirror.verify.compare import plan_ranges
from tests.support import profiles as pf

TOPIC = "DYNAMIC_TOPIC_CONFIG"
DEFAULT = "DEFAULT_CONFIG"
OFF = {"sync_configs": False, "grow_partitions": False}


def entries(**configs: str | tuple[str, str]) -> list[ConfigEntry]:
    """Config entries set on the topic (a value) or from elsewhere (value, source)."""
    return [
        ConfigEntry(name.replace("_", "."), *(value if isinstance(value, tuple) else (value, TOPIC)))
        for name, value in configs.items()
    ]


def test_the_topics_own_configs_are_copied_less_the_excluded_and_the_defaults():
    source = entries(
        cleanup_policy="compact",
        retention_ms="7200000",
        min_insync_replicas="2",  # MirrorMaker 2's list excludes it
        segment_bytes=("1073741824", DEFAULT),  # a default: the target's own applies
        message_timestamp_type="LogAppendTime",
    )
    assert configs_to_copy(source, MM2_EXCLUDED_CONFIGS) == {"cleanup.policy": "compact", "retention.ms": "7200000"}
    assert configs_to_copy(source, []) == {
        "cleanup.policy": "compact",
        "retention.ms": "7200000",
        "min.insync.replicas": "2",
        "message.timestamp.type": "LogAppendTime",
    }


def test_excludes_are_java_regexes_matching_the_whole_name():
    assert excluded("retention.ms", [r"retention\..*"])
    assert not excluded("local.retention.ms", [r"retention\..*"])  # whole name, not a search
    assert not excluded("min.insync.replicas.x", MM2_EXCLUDED_CONFIGS)
    assert all(excluded(name.replace("\\", ""), MM2_EXCLUDED_CONFIGS) for name in MM2_EXCLUDED_CONFIGS)


def test_changes_set_what_differs_and_delete_what_the_source_no_longer_sets():
    source = entries(cleanup_policy="compact", retention_ms="100", min_insync_replicas="2")
    target = entries(retention_ms="50", max_message_bytes="9000", min_insync_replicas="1")
    assert config_changes(source, target, MM2_EXCLUDED_CONFIGS) == [
        ConfigChange("SET", "cleanup.policy", "compact"),
        ConfigChange("SET", "retention.ms", "100"),
        ConfigChange("DELETE", "max.message.bytes"),  # the target's default applies again (use.defaults.from target)
    ]  # min.insync.replicas is excluded: the target keeps its own
    assert config_changes(source, source, MM2_EXCLUDED_CONFIGS) == []


@pytest.mark.parametrize(("source", "target", "action"), [(3, 1, "grow"), (3, 3, "same"), (2, 4, "more")])
def test_partition_growth(source, target, action):
    assert partition_growth(source, target) == action


def test_partition_problems_name_the_fix():
    assert partition_problem("a", "src.a", 3, 3, False) is None
    assert partition_problem("a", "src.a", 3, 1, True) is None  # the job grows it
    finding, fix = partition_problem("a", "src.a", 3, 1, False)
    assert finding == "target topic src.a has 1 partitions and a has 3, and the mirror will not add them"
    assert fix.startswith("add partitions to it (kafka-topics.sh --alter --topic src.a --partitions 3)")
    finding, fix = partition_problem("a", "src.a", 2, 4, True)
    assert "Kafka removes no partitions" in finding
    assert fix == "recreate src.a with 2 partitions (or add partitions to the source topic)"


def test_the_profile_field_defaults_to_mm2s_excludes_and_refuses_a_regex_it_cannot_evaluate(tmp_path):
    shape = pf.load(tmp_path).mirror.topic_shape
    assert (shape.sync_configs, shape.grow_partitions, shape.interval_seconds) == (True, True, 30)
    assert shape.exclude_configs == list(MM2_EXCLUDED_CONFIGS)
    with pytest.raises(ProfileError, match=r"mirror\.topic_shape\.exclude_configs\.1"):
        pf.load(tmp_path, topic_shape={"exclude_configs": ["retention\\.ms", "a(b"]})
    with pytest.raises(ProfileError, match=r"mirror\.topic_shape\.interval_seconds"):
        pf.load(tmp_path, topic_shape={"interval_seconds": 0})


@pytest.mark.parametrize(
    ("grow", "keep", "grows"),
    [(True, "auto", True), (True, True, True), (True, False, False), (False, "auto", False), (False, True, False)],
)
def test_target_partitions_grow_only_with_growth_on_and_partitions_kept(tmp_path, grow, keep, grows):
    mirror = pf.load(tmp_path, keep_partition=keep, topic_shape={"grow_partitions": grow}).mirror
    assert mirror.grows_partitions is grows
    assert grows_partitions(grow, keep) is grows  # what the job's planner asks, over job.json's copy of both


def _operations(plan) -> set[str]:
    return {b.operation for b in plan.bindings if b.resource_type == "TOPIC" and b.resource_name not in plan.own_topics}


def test_render_grants_the_shape_operations_only_where_needed(tmp_path):
    on = pf.load(tmp_path)
    assert _operations(acls.source_acls(on)) == {"READ", "DESCRIBE", "DESCRIBE_CONFIGS"}
    assert {"ALTER_CONFIGS", "ALTER"} <= _operations(acls.target_acls(on))
    off = pf.load(tmp_path, topic_shape=OFF)
    assert _operations(acls.source_acls(off)) == {"READ", "DESCRIBE"}
    assert not {"ALTER_CONFIGS", "ALTER"} & _operations(acls.target_acls(off))
    unkept = pf.load(tmp_path, keep_partition=False)  # growth is for kept partitions only
    assert "ALTER" not in _operations(acls.target_acls(unkept))
    assert "ALTER_CONFIGS" in _operations(acls.target_acls(unkept))


def _described(operations) -> dict:
    return {"src.orders.eu": {"partitions": 3, "operations": operations}}


@pytest.mark.parametrize(
    ("keep", "operations", "statuses"),
    [
        ("auto", ["WRITE", "ALTER_CONFIGS", "ALTER"], [PASS, PASS]),
        ("auto", ["WRITE"], [WARN, WARN]),  # the job runs, less the shape
        (True, ["WRITE", "ALTER_CONFIGS"], [PASS, FAIL]),  # a source that grows would stop the job
        ("auto", None, [UNVERIFIED, UNVERIFIED]),  # brokers before Kafka 2.3
    ],
)
def test_preflight_judges_the_target_permissions(tmp_path, keep, operations, statuses):
    profile = pf.load(tmp_path, keep_partition=keep)
    found = shape_checks.target_checks(profile, acls.target_acls(profile), _described(operations))
    assert [(c.id, c.status) for c in found] == list(
        zip(["target.acl.topic-configs", "target.acl.topic-grow"], statuses, strict=True)
    )
    if WARN in statuses:
        assert found[0].commands and "--operation AlterConfigs" in found[0].commands[0]
    if UNVERIFIED in statuses:  # the audit proves it, as it proves WRITE
        assert [c.proven_by for c in found] == ["target.audit.topic-alter-configs", "target.audit.topic-alter"]


@pytest.mark.parametrize(
    ("asked", "status", "said"),
    [
        ({}, UNVERIFIED, "cannot be asked"),  # no probe answered: never a pass
        ({"orders.eu": None}, PASS, "asked by describing their configs"),
        ({"orders.eu": "TOPIC_AUTHORIZATION_FAILED"}, WARN, "may not DESCRIBE_CONFIGS"),
        ({"orders.eu": "NO_ANSWER"}, UNVERIFIED, "cannot be asked"),
        ({"orders.eu": "REQUEST_TIMED_OUT"}, UNVERIFIED, "cannot be asked"),
    ],
)
def test_an_old_source_is_asked_describe_configs_by_its_effect(tmp_path, asked, status, said):
    """Brokers before Kafka 2.3 report no authorized operations (an external authorizer such as Ranger's shows no
    ACLs either): DESCRIBE_CONFIGS is what a DescribeConfigs answer proves, and only that."""
    profile = pf.load(tmp_path)
    described = {"orders.eu": {"partitions": 3, "operations": None}}
    [found] = shape_checks.source_checks(profile, acls.source_acls(profile), described, asked)
    assert (found.id, found.status) == ("source.acl.topic-configs", status)
    assert said in found.finding
    if status == WARN:
        assert "--operation DescribeConfigs" in found.commands[0]


def test_preflight_asks_nothing_when_the_shape_is_off(tmp_path):
    profile = pf.load(tmp_path, topic_shape=OFF)
    assert shape_checks.target_checks(profile, acls.target_acls(profile), _described(["WRITE"])) == []
    assert shape_checks.source_checks(profile, acls.source_acls(profile), _described(["READ"])) == []
    assert shape_checks.audit_needs(profile, "target", ["orders.eu"]) == []


def test_the_audit_evaluates_the_operations_render_grants(tmp_path):
    profile = pf.load(tmp_path)
    assert shape_checks.audit_needs(profile, "source", ["orders.eu"]) == [("DESCRIBE_CONFIGS", "TOPIC", ["orders.eu"])]
    assert shape_checks.audit_needs(profile, "target", ["orders.eu"]) == [
        ("ALTER_CONFIGS", "TOPIC", ["src.orders.eu"]),
        ("ALTER", "TOPIC", ["src.orders.eu"]),
    ]
    plan = acls.target_acls(profile)
    for operation, kind, names in shape_checks.audit_needs(profile, "target", ["orders.eu"]):
        assert plan.need(operation, kind, names).grants  # granted by the plan render writes


def test_verify_reports_partition_counts_the_job_will_not_fix(tmp_path):
    def counts(profile, target_partitions):
        committed = {("orders.eu", p): 1 for p in range(2)}
        source = {("orders.eu", p): (0, 1) for p in range(2)}
        target = {("src.orders.eu", p): (0, 1) for p in range(target_partitions)}
        return plan_ranges(profile, committed, {}, source, target).partition_counts

    assert counts(pf.load(tmp_path), 2) == []
    assert counts(pf.load(tmp_path), 1) == []  # the job grows it
    [more] = counts(pf.load(tmp_path), 3)
    assert more["fix"] == "recreate src.orders.eu with 2 partitions (or add partitions to the source topic)"
    [fewer] = counts(pf.load(tmp_path, topic_shape=OFF), 1)
    assert (
        fewer["finding"]
        == "target topic src.orders.eu has 1 partitions and orders.eu has 2, and the mirror will not add them"
    )
    assert counts(pf.load(tmp_path, keep_partition=False), 3) == []
