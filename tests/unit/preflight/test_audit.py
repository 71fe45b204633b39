"""The audit's evaluation (pure, ``preflight/checks/audit.py``): the ACLs an admin read, judged as the brokers'
authorizer would for the needs the identity's ACL plan holds; the whole list of checks with exact findings and fixes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from secure_mirror.kafka.acl import Acl, kafka_acls_command
from secure_mirror.preflight.checks.audit import audit_checks, cluster_operations
from secure_mirror.preflight.model import FAIL, PASS, UNVERIFIED, WARN, Check
from secure_mirror.profile import load_profile
from secure_mirror.render import acls as acl_plans
from tests.support import profiles as pf
from tests.unit.preflight.conftest import NO_SHAPE, TARGET_BROKER, acl

HOST = "10.0.0.5"
SOURCE_TOPICS = {"orders.eu": 3, "payments": 2, "other": 1}
PREFIX = "secure-mirror-src-tgt-eos-"


def _acl(operation, name, host="*", resource_type="TOPIC", pattern="LITERAL"):
    return Acl(
        principal="User:mirror",
        host=host,
        operation=operation,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


def allowed(operation: str, resource_type: str, name: str, pattern: str) -> str:
    return f"allowed by ALLOW {operation} on {resource_type} {pattern} '{name}' for User:mirror"


def test_a_grant_for_one_host_is_reported_as_valid_for_that_host_only(tmp_path):
    data = pf.profile_data(tmp_path, source=pf.password(tmp_path, "source", "SCRAM-SHA-512"))
    data["mirror"]["topics"] = {"include": "payments"}
    profile = load_profile(pf.write_profile(tmp_path, data))
    acls = [
        _acl("READ", "payments", host="10.0.0.5"),
        _acl("DESCRIBE", "payments"),
        _acl("READ", "secure-mirror-src-tgt-", resource_type="GROUP", pattern="PREFIXED"),
    ]
    checks = {
        c.id: c
        for c in audit_checks(profile, "source", {"topics": {"payments": 1}, "acls": acls}, {"payments": 1}, "10.0.0.5")
    }
    read = checks["source.audit.topic-read"]
    assert read == Check(
        "source.audit.topic-read",
        WARN,
        "READ on 1 topic(s) is granted for connections from 10.0.0.5 only (valid for this host only): allowed by ALLOW "
        "READ on TOPIC LITERAL 'payments' for User:mirror from 10.0.0.5",
        "grant it for every host the job's driver and executors run on (--allow-host '*' or each host); this audit "
        "evaluated connections from 10.0.0.5",
        details={
            "decisions": {
                "payments": "allowed by ALLOW READ on TOPIC LITERAL 'payments' for User:mirror from 10.0.0.5"
            },
            "hosts": ["10.0.0.5"],
        },
    )
    elsewhere = {
        c.id: c
        for c in audit_checks(profile, "source", {"topics": {"payments": 1}, "acls": acls}, {"payments": 1}, "10.0.0.9")
    }
    assert elsewhere["source.audit.topic-read"].status == "fail"


def test_the_rendered_grants_pass_the_source_audit(profile, source_plan):
    stranger = replace(source_plan.bindings[0], principal="User:other")
    acls = [*source_plan.bindings, stranger]
    group = acl_plans.spark_group(profile)
    found = audit_checks(profile, "source", {"topics": SOURCE_TOPICS, "acls": acls}, SOURCE_TOPICS, HOST)
    read = {
        "orders.eu": allowed("READ", "TOPIC", "orders", "PREFIXED"),
        "payments": allowed("READ", "TOPIC", "payments", "LITERAL"),
    }
    describe = read  # the first applicable ALLOW decides: READ, which implies DESCRIBE
    assert found == [
        Check(
            "source.audit.acls",
            PASS,
            f"5 ACL(s) apply to User:mirror (of 6 on the cluster); evaluated for connections from {HOST}",
            details={"acls": source_plan.bindings},
        ),
        Check(
            "source.audit.topic-read",
            PASS,
            f"READ on 2 topic(s): {read['payments']}; {read['orders.eu']}",
            details={"decisions": read},
        ),
        Check(
            "source.audit.topic-describe",
            PASS,
            f"DESCRIBE on 2 topic(s): {describe['payments']}; {describe['orders.eu']}",
            details={"decisions": describe},
        ),
        Check(
            "source.audit.group-read",
            PASS,
            f"READ on 1 group(s): {allowed('READ', 'GROUP', 'secure-mirror-src-tgt-', 'PREFIXED')}",
            details={"decisions": {group: allowed("READ", "GROUP", "secure-mirror-src-tgt-", "PREFIXED")}},
        ),
    ]


def test_an_admin_that_cannot_read_fails_once(profile):
    assert audit_checks(profile, "target", {"error": "Broker: Cluster authorization failed"}, {}, HOST) == [
        Check(
            "target.audit.connect",
            FAIL,
            "the admin identity could not read topics and ACLs: Broker: Cluster authorization failed",
            "give --as-admin an identity with DESCRIBE on the cluster (a super user or an ACL admin)",
        )
    ]


def test_an_admin_the_brokers_report_without_describe_on_the_cluster_fails_whatever_it_read(profile):
    """Kafka refuses DescribeAcls (CLUSTER_AUTHORIZATION_FAILED) from an identity without DESCRIBE on the cluster, and
    librdkafka hands the refusal over as an empty list: never PASS, and no need judged from it."""
    for acls in ([], [_acl("READ", "payments")]):
        data = {"topics": SOURCE_TOPICS, "acls": acls, "operations": ["ALTER", "IDEMPOTENT_WRITE"], "authorizer": None}
        assert audit_checks(profile, "source", data, SOURCE_TOPICS, HOST) == [
            Check(
                "source.audit.acls",
                FAIL,
                "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED): the brokers report no DESCRIBE on the "
                "cluster for the admin identity (its operations there: ALTER, IDEMPOTENT_WRITE), so no ACL was read "
                "and nothing is concluded from them; the mirror's access was not judged from them",
                "give --as-admin an identity with DESCRIBE on the cluster (a super user or an ACL admin)",
            )
        ]


def test_no_operation_reported_by_brokers_that_report_them_is_describe_acls_refused(profile):
    """Kafka 2.3+ reports a client's operations on the cluster, and confluent-kafka hands "none" over as None."""
    data = {"topics": SOURCE_TOPICS, "acls": [], "operations": None, "authorizer": None, "reports_operations": True}
    assert audit_checks(profile, "target", data, SOURCE_TOPICS, HOST) == [
        Check(
            "target.audit.acls",
            FAIL,
            "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED): the brokers report no DESCRIBE on the cluster "
            "for the admin identity (its operations there: none), so no ACL was read and nothing is concluded from "
            "them; the mirror's access was not judged from them",
            "give --as-admin an identity with DESCRIBE on the cluster (a super user or an ACL admin)",
        )
    ]


EMPTY_FIX = (
    "pre-flight without --as-admin proves the access by the brokers' answers; where an external authorizer (Apache "
    "Ranger) decides, review its policies for the mirror's principal"
)


def test_no_acl_read_where_the_brokers_report_no_operations_is_unverified(profile):
    data = {"topics": SOURCE_TOPICS, "acls": [], "operations": None, "authorizer": None}
    assert audit_checks(profile, "target", data, SOURCE_TOPICS, HOST) == [
        Check(
            "target.audit.acls",
            UNVERIFIED,
            "DescribeAcls answered an empty list: either the cluster holds no ACL, or its authorizer (Apache Ranger's, "
            "say) grants access by policies of its own, which DescribeAcls does not show, or the admin identity lacks "
            "DESCRIBE on the cluster (the brokers report no operations: before Kafka 2.3); nothing is concluded from "
            "it; the mirror's access was not judged from them",
            EMPTY_FIX,
        )
    ]


RANGER = "org.apache.ranger.authorization.kafka.authorizer.RangerKafkaAuthorizer"


@pytest.mark.parametrize("operations", [["DESCRIBE"], ["ALL"]])
@pytest.mark.parametrize("authorizer", [RANGER, "org.apache.kafka.metadata.authorizer.StandardAuthorizer", None])
def test_an_empty_list_read_by_an_admin_that_may_describe_acls_is_unverified_never_a_grant_to_add(
    profile, operations, authorizer
):
    """An authorizer that serves no ACLs (Ranger's answers an empty list although its policies grant) cannot be told
    from a cluster without ACLs: no need is judged, no grant is named, whatever authorizer the brokers name."""
    data = {"topics": SOURCE_TOPICS, "acls": [], "operations": operations, "authorizer": authorizer}
    named = f" (the brokers' authorizer: {authorizer})" if authorizer else ""
    assert audit_checks(profile, "source", data, SOURCE_TOPICS, HOST) == [
        Check(
            "source.audit.acls",
            UNVERIFIED,
            f"DescribeAcls answered an empty list{named}: either the cluster holds no ACL, or its authorizer (Apache "
            "Ranger's, say) grants access by policies of its own, which DescribeAcls does not show; nothing is "
            "concluded from it; the mirror's access was not judged from them",
            EMPTY_FIX,
        )
    ]


def test_brokers_without_an_authorizer_are_unverified_whatever_was_read(profile, source_plan):
    """authorizer.class.name empty: Kafka answers DescribeAcls SECURITY_DISABLED (an empty list, through librdkafka),
    and enforces no ACL; bindings stored anyway would not be what decides."""
    for acls in ([], source_plan.bindings):
        data = {"topics": SOURCE_TOPICS, "acls": acls, "operations": ["ALL"], "authorizer": ""}
        assert audit_checks(profile, "target", data, SOURCE_TOPICS, HOST) == [
            Check(
                "target.audit.acls",
                UNVERIFIED,
                "the brokers have no authorizer (authorizer.class.name is empty; DescribeAcls answers "
                "SECURITY_DISABLED): they enforce no ACL and grant every client everything, so no ACL was read and "
                "nothing is concluded from them; the mirror's access was not judged from them",
                "pre-flight without --as-admin proves the access by the brokers' answers; configure an authorizer "
                "(authorizer.class.name) for the ACLs to matter",
            )
        ]


@pytest.mark.parametrize("operations", [["DESCRIBE"], ["ALL"], None])
def test_acls_read_by_an_admin_that_may_describe_them_are_judged(profile, source_plan, operations):
    """Bindings read are judged where DESCRIBE is reported, and prove the right where the brokers report no
    operations; another principal's bindings alone: every need fails with the plan's grant."""
    acls = (
        source_plan.bindings
        if operations is None
        else [replace(b, principal="User:other") for b in source_plan.bindings]
    )
    data = {"topics": SOURCE_TOPICS, "acls": acls, "operations": operations, "authorizer": None}
    found = {c.id: c for c in audit_checks(profile, "source", data, SOURCE_TOPICS, HOST)}
    assert found["source.audit.acls"].status == PASS
    read = found["source.audit.topic-read"]
    assert (read.status, bool(read.acls)) == ((PASS, False) if operations is None else (FAIL, True))


def test_a_selection_of_nothing_fails_the_source_audit(profile):
    found = audit_checks(
        profile,
        "source",
        {"topics": {"other": 1}, "acls": [_acl("READ", "x")], "operations": ["ALL"]},
        {"other": 1},
        HOST,
    )
    assert [(c.id, c.status) for c in found] == [("source.audit.acls", PASS), ("source.audit.topics", FAIL)]
    assert found[1] == Check(
        "source.audit.topics",
        FAIL,
        "mirror.topics selects none of the cluster's topics (seen as admin)",
        "fix mirror.topics.include/exclude",
    )


@pytest.fixture
def eos(tmp_path):
    return pf.load(tmp_path, delivery={"guarantee": "exactly_once"}, topic_shape=NO_SHAPE)


def test_the_target_audit_names_deny_rules_and_the_plans_grants(eos):
    """exactly_once on brokers before Kafka 2.8: every need the plan holds is evaluated; a DENY is named for removal,
    a need no rule decides gets the plan's grant."""
    plan = acl_plans.target_acls(eos)
    deny = replace(acl("WRITE", "TOPIC", "src.payments"), permission="DENY")
    acls = [b for b in plan.bindings if b.operation != "CREATE"] + [deny]
    data = {"topics": {"src.orders.eu": 3}, "acls": acls}
    found = {c.id: c for c in audit_checks(eos, "target", data, SOURCE_TOPICS, HOST, ("IDEMPOTENT_WRITE",))}
    assert list(found) == [
        "target.audit.acls",
        "target.audit.topic-write",
        "target.audit.topic-describe",
        "target.audit.topic-create",
        "target.audit.transactional_id-write",
        "target.audit.transactional_id-describe",
        "target.audit.group-read",
        "target.audit.topic-read",
        "target.audit.cluster-idempotent-write",
    ]
    assert {i: c.status for i, c in found.items() if c.status != PASS} == {
        "target.audit.topic-write": FAIL,
        "target.audit.topic-create": FAIL,
        "target.audit.cluster-idempotent-write": FAIL,
    }
    remove = kafka_acls_command(deny, TARGET_BROKER, remove=True)
    denied = "denied by DENY WRITE on TOPIC LITERAL 'src.payments' for User:mirror"
    assert found["target.audit.topic-write"] == Check(
        "target.audit.topic-write",
        FAIL,
        f"User:mirror is denied WRITE on 1 of 2 topic(s): src.payments: {denied}",
        f"remove the DENY rule(s) and/or add the grant(s): {remove}",
        commands=[remove],
        details={"denied": {"src.payments": denied}, "deny_rules": [deny]},
    )
    create = acl("CREATE", "TOPIC", "src.payments")
    no_create = "no ACL allows CREATE on TOPIC src.payments for User:mirror"
    assert found["target.audit.topic-create"] == Check(
        "target.audit.topic-create",
        FAIL,
        f"User:mirror is denied CREATE on 1 of 1 topic(s): src.payments: {no_create}",
        f"remove the DENY rule(s) and/or add the grant(s): {kafka_acls_command(create, TARGET_BROKER)}",
        acls=[create],
        commands=[kafka_acls_command(create, TARGET_BROKER)],
        details={"denied": {"src.payments": no_create}, "deny_rules": []},
    )
    idempotent = acl("IDEMPOTENT_WRITE", "CLUSTER", "kafka-cluster")
    assert found["target.audit.cluster-idempotent-write"].acls == plan.older_brokers == [idempotent]
    ids = [f"{PREFIX}orders.eu-0", f"{PREFIX}payments-0", f"{PREFIX}task#{eos.job_key}#0"]
    ids += [f"{PREFIX}topic#orders.eu", f"{PREFIX}topic#payments"]  # a producer per task's names (exactly-once.md)
    assert list(found["target.audit.transactional_id-write"].details["decisions"]) == ids
    assert list(found["target.audit.group-read"].details["decisions"]) == ids


def test_create_on_the_cluster_allows_creating_any_topic(profile, target_plan):
    acls = [b for b in target_plan.bindings if b.operation != "CREATE"] + [acl("CREATE", "CLUSTER", "kafka-cluster")]
    found = {c.id: c for c in audit_checks(profile, "target", {"topics": {}, "acls": acls}, SOURCE_TOPICS, HOST)}
    assert found["target.audit.topic-create"] == Check(
        "target.audit.topic-create",
        PASS,
        "CREATE on 2 topic(s): allowed by ALLOW CREATE on CLUSTER LITERAL 'kafka-cluster' for User:mirror",
        details={
            "decisions": {
                n: allowed("CREATE", "CLUSTER", "kafka-cluster", "LITERAL") for n in ("src.orders.eu", "src.payments")
            }
        },
    )


def test_nothing_to_create_passes(profile, target_plan):
    data = {"topics": {"src.orders.eu": 3, "src.payments": 2}, "acls": target_plan.bindings}
    found = {c.id: c for c in audit_checks(profile, "target", data, SOURCE_TOPICS, HOST)}
    assert found["target.audit.topic-create"] == Check("target.audit.topic-create", PASS, "nothing needs CREATE")


@pytest.mark.parametrize(
    ("status", "operations"), [(FAIL, ("IDEMPOTENT_WRITE",)), (UNVERIFIED, ("IDEMPOTENT_WRITE",)), (PASS, None)]
)
def test_the_audit_evaluates_idempotent_write_where_pre_flight_could_not_pass_it(status, operations):
    checks = [Check("source.acl.topic-read", FAIL, "x"), Check("target.acl.idempotent-write", status, "y")]
    assert cluster_operations(checks) == ({"target": operations} if operations else {})
    assert cluster_operations(checks[:1]) == {}
