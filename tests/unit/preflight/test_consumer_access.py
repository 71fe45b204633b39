"""Audit mode's ``target.audit.consumer-access`` (preflight/checks/consumer_access.py) as a pure decision over the
admin's inventories of both sides: every planned binding present, some missing, nothing to copy, a side unreadable.
The planning rules themselves are render/consumer_acls.py's (tests/unit/render/test_consumer_acls.py)."""

from __future__ import annotations

import pytest

from secure_mirror.kafka import acl_answers
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.checks.consumer_access import FIX, NOT_READABLE_FIX, consumer_access
from secure_mirror.preflight.model import PASS, SKIPPED, UNVERIFIED, WARN, Check
from tests.support import profiles as pf

TOPICS = ["orders.eu", "payments", "secret"]  # the profile selects orders.*,payments; renames to src.<topic>


def acl(principal: str, operation: str, resource_type: str, name: str, pattern: str = "LITERAL", **kw) -> Acl:
    return Acl(
        principal=f"User:{principal}",
        operation=operation,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
        **kw,
    )


SOURCE = [
    acl("alice", "READ", "TOPIC", "orders.", "PREFIXED"),
    acl("alice", "READ", "GROUP", "billing-", "PREFIXED"),
    acl("bob", "WRITE", "TOPIC", "payments"),  # a producer: nothing to copy
    acl("mirror", "READ", "TOPIC", "payments"),  # the mirror's own: not a consumer
]
NEEDED = [  # what render/consumer_acls.py plans for SOURCE on the target
    acl("alice", "READ", "TOPIC", "src.orders.eu"),  # each topic: mirror.topics.exclude keeps the prefix off
    acl("alice", "DESCRIBE", "TOPIC", "src.orders.eu"),
    acl("alice", "READ", "GROUP", "billing-", "PREFIXED"),
]
MIRROR_ON_TARGET = [acl("mirror", "WRITE", "TOPIC", "src.payments")]


@pytest.fixture
def profile(tmp_path):
    return pf.load(tmp_path)


ADMIN = ["ALTER", "DESCRIBE"]  # the brokers' report of an ACL admin's operations on the cluster
KAFKAS = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def inventory(
    acls: list[Acl], topics: list[str] = TOPICS, operations: list[str] | None = ADMIN, authorizer: str | None = KAFKAS
) -> dict:
    return {"topics": topics, "acls": acls, "operations": operations, "authorizer": authorizer}


def test_pass_when_the_target_holds_every_planned_binding(profile):
    got = consumer_access(profile, inventory(SOURCE), inventory(MIRROR_ON_TARGET + NEEDED))
    assert got == Check(
        "target.audit.consumer-access",
        PASS,
        "the 3 binding(s) the source's consumers need after failover are on the target",
        details={"needed": 3, "missing": 0, "not_copied": 2},
    )


def test_warn_names_how_many_are_missing_a_few_of_them_and_the_acls_command(profile):
    got = consumer_access(profile, inventory(SOURCE), inventory(MIRROR_ON_TARGET + NEEDED[1:2]))
    assert got == Check(
        "target.audit.consumer-access",
        WARN,
        "2 of the 3 binding(s) the source's consumers need after failover are missing on the target: "
        "ALLOW READ on TOPIC src.orders.eu for User:alice; ALLOW READ on GROUP billing- (PREFIXED) for User:alice",
        FIX,
        acls=[NEEDED[0], NEEDED[2]],
        details={"needed": 3, "missing": 2, "not_copied": 2},
    )
    assert FIX.startswith("secure-mirror acls PROFILE --consumers --as-admin ADMIN --out DIR, review")


def test_warn_shows_three_examples_and_counts_the_rest_with_their_hosts(profile):
    readers = [acl(f"r{i}", "READ", "TOPIC", "payments", host="10.0.0.1") for i in range(3)]
    got = consumer_access(profile, inventory(readers), inventory(MIRROR_ON_TARGET))
    assert got.status == WARN and got.details == {"needed": 6, "missing": 6, "not_copied": 0}
    assert got.finding.endswith(
        "on the target: ALLOW READ on TOPIC src.payments for User:r0 from 10.0.0.1; "
        "ALLOW DESCRIBE on TOPIC src.payments for User:r0 from 10.0.0.1; "
        "ALLOW READ on TOPIC src.payments for User:r1 from 10.0.0.1 (+3 more)"
    )


def test_nothing_to_copy_passes_when_no_source_binding_lets_a_consumer_read(profile):
    only_others = [*SOURCE[2:], acl("carol", "READ", "TOPIC", "secret"), acl("*", "READ", "TOPIC", "payments")]
    got = consumer_access(profile, inventory(only_others), inventory(MIRROR_ON_TARGET))
    assert got == Check(
        "target.audit.consumer-access",
        PASS,
        "no source binding lets a consumer read the selected topics: nothing to copy to the target",
        details={"needed": 0, "missing": 0, "not_copied": 3},  # WRITE, the mirror's own, User:* (secret: not read)
    )


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_side_the_admin_could_not_read_is_unverified(profile, side):
    answers = {"source": inventory(SOURCE), "target": inventory(NEEDED), side: {"error": "SASL authentication failed"}}
    got = consumer_access(profile, answers["source"], answers["target"])
    assert got == Check(
        "target.audit.consumer-access",
        UNVERIFIED,
        "the consumers' access after failover was not judged: the admin could not read the "
        f"{side}'s topics and ACLs: SASL authentication failed",
        f"give --as-admin an identity with DESCRIBE on the {side} cluster (a super user or an ACL admin)",
    )


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_side_whose_admin_may_not_describe_acls_is_unverified(profile, side):
    """DescribeAcls refused (librdkafka hands the refusal over as an empty list): never judged as the truth."""
    answers = {"source": inventory(SOURCE), "target": inventory(NEEDED), side: inventory([], operations=["ALTER"])}
    got = consumer_access(profile, answers["source"], answers["target"])
    refused = acl_answers.REFUSED_FINDING.format(who="the admin identity", operations="ALTER")
    assert got == Check(
        "target.audit.consumer-access",
        UNVERIFIED,
        f"the consumers' access after failover was not judged: the {side}'s ACLs were not read: {refused}",
        f"give --as-admin an identity with DESCRIBE on the {side} cluster (a super user or an ACL admin)",
    )
    assert got.finding.startswith(
        f"the consumers' access after failover was not judged: the {side}'s ACLs were not read: DescribeAcls was "
        "refused (CLUSTER_AUTHORIZATION_FAILED): the brokers report no DESCRIBE on the cluster for the admin identity"
    )


@pytest.mark.parametrize("side", ["source", "target"])
@pytest.mark.parametrize(
    ("authorizer", "said"),
    [
        ("", "the brokers have no authorizer (authorizer.class.name is empty; DescribeAcls answers SECURITY_DISABLED)"),
        (
            "org.apache.ranger.authorization.kafka.authorizer.RangerKafkaAuthorizer",
            "DescribeAcls answered an empty list",
        ),
        (None, "DescribeAcls answered an empty list"),
    ],
)
def test_no_authorizer_or_no_acl_at_all_on_a_side_is_unverified_not_nothing_to_copy(profile, side, authorizer, said):
    """An empty list (a Ranger-authorized cluster answers one) or a cluster without an authorizer, on either side:
    neither "nothing to copy" (source) nor "all missing" (target)."""
    answers = {"source": inventory(SOURCE), "target": inventory(NEEDED), side: inventory([], authorizer=authorizer)}
    got = consumer_access(profile, answers["source"], answers["target"])
    assert (got.status, got.fix) == (UNVERIFIED, NOT_READABLE_FIX)
    assert got.finding.startswith(
        f"the consumers' access after failover was not judged: the {side}'s ACLs were not read: {said}"
    )
    assert got.finding.endswith(("nothing is concluded from them", "nothing is concluded from it"))


def test_skipped_when_the_source_was_not_audited(profile):
    got = consumer_access(profile, None, inventory(NEEDED))
    assert (got.id, got.status) == ("target.audit.consumer-access", SKIPPED)
    assert got.finding == "skipped: needs both sides audited (pre-flight of both sides with --as-admin)"
