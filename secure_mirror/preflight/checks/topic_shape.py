"""``mirror.topic_shape`` (docs/replica.md): the permissions the job needs to give target topics the source's configs
and partitions, judged through the topics' authorized operations the describe answers carry; the partition counts
against what the job can do about them; and what the audit evaluates. Pure: the describe answers come from
source.py's and target.py's asking."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from secure_mirror.preflight.checks.acl_fixes import lacking
from secure_mirror.preflight.checks.base import REFUSED, check, listed, meaning
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, UNVERIFIED, WARN, Check, Status
from secure_mirror.preflight.probes.kafka_admin import topics as topic_probes
from secure_mirror.profile.models import Profile
from secure_mirror.profile.topic_shape import partition_growth, partition_problem
from secure_mirror.render.acls import AclPlan
from secure_mirror.render.acls import topic_shape as acl_plans

CONFIGS_CHECK = "acl.topic-configs"
GROW_CHECK = "acl.topic-grow"
WITHOUT = {
    "DESCRIBE_CONFIGS": "the job mirrors without copying or syncing topic configs (it says so once in its log)",
    "ALTER_CONFIGS": "the job mirrors without syncing topic configs (it says so once in its log)",
    "ALTER": "the job cannot add partitions to a target topic whose source grew them",
}


def operation_check(
    plan: AclPlan,
    what: str,
    operation: str,
    described: Mapping[str, topic_probes.TopicAnswer],
    asked: Mapping[str, str | None] | None = None,
) -> Check:
    """``<side>.<what>``: ``operation`` on the described topics (those answering an error are judged elsewhere).
    Missing, it warns (the mirror runs, less the topic shape); not reported by the brokers (before Kafka 2.3), it is
    judged by ``asked`` (topic -> None: a probe the authorizer answered; an authorization error, ``base.meaning``:
    refused; another code: not known), else unverified."""
    asked = asked or {}
    topics = {t: d for t, d in described.items() if "error" not in d}
    unreported = [t for t, d in topics.items() if d["operations"] is None]
    probed = [t for t in unreported if t in asked and asked[t] is None]
    refused = [t for t in unreported if t in asked and meaning(asked[t]) == REFUSED]
    unasked = sorted(t for t in unreported if t not in probed and t not in refused)
    missing = sorted(
        [t for t, d in topics.items() if d["operations"] is not None and operation not in d["operations"]] + refused
    )
    how = " (asked by describing their configs: the brokers, older than Kafka 2.3, report no authorized operations)"
    if missing:
        finding = f"{plan.principal} may not {operation} {len(missing)} {plan.side} topic(s): {listed(missing)}" + (
            how if refused else ""
        )
        failed = lacking(plan, what, plan.need(operation, "TOPIC", missing), f"{finding}; {WITHOUT[operation]}")
        return replace(failed, status=WARN)
    if unasked:
        finding = (
            f"the brokers, older than Kafka 2.3, report no authorized operations: {operation} on {len(unasked)} "
            f"{plan.side} topic(s) ({listed(unasked)}) cannot be asked"
        )
        proof = f"{plan.side}.audit.topic-{operation.lower().replace('_', '-')}"
        return check(plan.side, what, UNVERIFIED, finding, PROVE_WITH_AUDIT, proven_by=proof)
    finding = f"{plan.principal} may {operation} all {len(topics)} existing {plan.side} topic(s) it was asked about"
    return check(plan.side, what, PASS, finding + (how if probed else ""))


def source_checks(
    profile: Profile,
    plan: AclPlan,
    described: Mapping[str, topic_probes.TopicAnswer],
    asked: Mapping[str, str | None] | None = None,
) -> list[Check]:
    """DESCRIBE_CONFIGS on the selected source topics, with config sync on (``asked``: the DescribeConfigs answers
    of those whose operations the brokers do not report)."""
    if not profile.mirror.topic_shape.sync_configs:
        return []
    return [operation_check(plan, CONFIGS_CHECK, "DESCRIBE_CONFIGS", described, asked)]


def target_checks(profile: Profile, plan: AclPlan, exists: Mapping[str, topic_probes.Described]) -> list[Check]:
    """ALTER_CONFIGS (config sync) and ALTER (growth) on the existing target topics."""
    found = []
    if profile.mirror.topic_shape.sync_configs:
        found.append(operation_check(plan, CONFIGS_CHECK, "ALTER_CONFIGS", exists))
    if profile.mirror.grows_partitions:
        grow = operation_check(plan, GROW_CHECK, "ALTER", exists)
        keeps = profile.mirror.keep_partition is True  # a source that grows would stop the job
        found.append(replace(grow, status=FAIL) if keeps and grow.status == WARN else grow)
    return found


def partitions_check(
    profile: Profile, names: dict[str, int], exists: Mapping[str, topic_probes.Described], to_create: int
) -> Check:
    """``target.topics.partitions``: each existing target topic's partition count against its source's (``names``:
    target topic -> its source's partitions). More than the source's is reported (Kafka removes none); fewer fails
    where keep_partition is true and the job may not grow them, else warns; the job grows them where it may."""
    may_grow = profile.mirror.grows_partitions
    problems = {
        t: problem
        for t, d in sorted(exists.items())
        if (problem := partition_problem("its source", t, names[t], d["partitions"], may_grow))
    }
    growing = sorted(
        t for t in exists if t not in problems and partition_growth(names[t], exists[t]["partitions"]) == "grow"
    )
    if problems:
        fewer = [t for t in problems if partition_growth(names[t], exists[t]["partitions"]) == "grow"]
        status: Status = FAIL if fewer and profile.mirror.keep_partition is True else WARN
        finding, fix = next(iter(problems.values()))
        more = f" (+{len(problems) - 1} more: {listed(list(problems)[1:])})" if len(problems) > 1 else ""
        details = {"topics": {t: " ".join(problem) for t, problem in problems.items()}}
        return check("target", "topics.partitions", status, f"{finding}{more}", fix, details=details)
    grows = f"; the job adds partitions to {len(growing)} ({listed(growing)}) before it writes" if growing else ""
    finding = (
        f"{len(exists) - len(growing)} existing target topic(s) match their source's partition count{grows}; "
        f"{to_create} to create"
    )
    return check("target", "topics.partitions", PASS, finding)


def audit_needs(profile: Profile, side: str, selected: list[str]) -> list[tuple[str, str, list[str]]]:
    """What the audit evaluates for the topic shape: the operations render grants on the topics of ``side``."""
    if side == "source":
        return [(operation, "TOPIC", selected) for operation in acl_plans.shape_source_operations(profile)]
    targets = [profile.target_topic(t) for t in selected]
    return [(operation, "TOPIC", targets) for operation in acl_plans.shape_target_operations(profile)]
