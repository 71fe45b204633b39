"""Issue 58, point 7: a broker away is not a missing grant. What a broker's error code says of the permission asked is
read in one place (``checks.base.meaning``), and every judge that turned an error into a refusal asks it. Fed a
timeout, a transport error or a failed login (and, for contrast, an authorization error), each judge gives its exact
status; a question the brokers did not answer names the broker librdkafka could not ask and its error, never a
refusal. No cluster."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import groups, source, target
from secure_mirror.preflight.checks.base import (
    ANSWERED,
    REFUSED,
    REJECTED,
    UNASKED,
    brokers_unasked,
    meaning,
    no_answer,
)
from secure_mirror.preflight.model import FAIL, UNVERIFIED, Check
from secure_mirror.render import acls as acl_plans
from tests.support import profiles as pf
from tests.unit.preflight.conftest import NO_SHAPE

SASL = (
    "SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL "
    "mechanism GSSAPI (after 345ms in state AUTH_REQ)"
)
# librdkafka's client-level errors (``kafka_admin.said``) after broker 2's key changed in the KDC
SAID = [
    f"sasl_ssl://kafka-2.target.test:9094/bootstrap: {SASL}",
    "3/3 brokers are down",
    f"sasl_ssl://kafka-2.target.test:9094/2: {SASL}",
]
BROKER_2 = f"broker 2 (kafka-2.target.test:9094): {SASL}"
AGAIN = "run pre-flight again once every {side} broker answers ({side}.kafka.brokers names those that do not), or "
# the codes the brief names as "could not ask", INVALID_REPLICATION_FACTOR (fewer brokers up than the factor), the
# probes' own NO_ANSWER, and a code no list knows: none of them is a refusal
NO_ANSWER_CODES = [
    "_TIMED_OUT",
    "_TRANSPORT",
    "_ALL_BROKERS_DOWN",
    "REQUEST_TIMED_OUT",
    "NETWORK_EXCEPTION",
    "_AUTHENTICATION",
    "BROKER_NOT_AVAILABLE",
    "NOT_CONTROLLER",
    "COORDINATOR_NOT_AVAILABLE",
    "LEADER_NOT_AVAILABLE",
    "INVALID_REPLICATION_FACTOR",
    "NO_ANSWER",
    "A_CODE_NOT_KNOWN_YET",
]


# ---- the one reading -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", NO_ANSWER_CODES)
def test_a_timeout_a_transport_error_or_a_failed_login_is_no_answer(code):
    assert meaning(code) == UNASKED


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (None, ANSWERED),
        ("TOPIC_ALREADY_EXISTS", ANSWERED),
        ("UNKNOWN_TOPIC_OR_PART", ANSWERED),
        ("TOPIC_AUTHORIZATION_FAILED", REFUSED),
        ("GROUP_AUTHORIZATION_FAILED", REFUSED),
        ("CLUSTER_AUTHORIZATION_FAILED", REFUSED),
        ("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", REFUSED),
        ("POLICY_VIOLATION", REJECTED),
        ("INVALID_TOPIC_EXCEPTION", REJECTED),
    ],
)
def test_only_the_authorizer_refuses_and_only_the_brokers_rules_reject(code, expected):
    assert meaning(code) == expected


def test_the_brokers_librdkafka_could_not_ask_are_named_once_each_with_their_last_error():
    refused = "Connect to ipv4#127.0.0.1:9095 failed: Connection refused (after 0ms in state CONNECT)"
    said = [
        *SAID,
        f"kafka-3.target.test:9095/bootstrap: {refused}",  # PLAINTEXT names no scheme; never numbered yet
        f"sasl_ssl://kafka-2.target.test:9094/bootstrap: {SASL}, 1 identical error(s) suppressed",
    ]
    assert brokers_unasked(said) == [
        f"{BROKER_2}, 1 identical error(s) suppressed",  # numbered once, it keeps its number
        f"the broker at kafka-3.target.test:9095: {refused}",
    ]
    assert brokers_unasked(["1/1 brokers are down", "Failed to get metadata: Local: Broker transport failure"]) == []
    assert (
        no_answer(["_TIMED_OUT", "_TRANSPORT", "_TIMED_OUT"]) == "the brokers gave no answer (_TIMED_OUT, _TRANSPORT)"
    )
    assert (
        no_answer(["_TIMED_OUT"], SAID)
        == f"the brokers gave no answer (_TIMED_OUT); this identity could not ask {BROKER_2}"
    )


# ---- every judge, fed no answer and a refusal ---------------------------------------------------------------------
ABSENT = {"error": "UNKNOWN_TOPIC_OR_PART"}


@pytest.fixture
def synced(tmp_path):
    return pf.load(
        tmp_path, groups={"include": "app\\.orders"}, delivery={"guarantee": "exactly_once"}, topic_shape=NO_SHAPE
    )


def _judges(profile, code: str) -> dict[str, Check]:
    """Each judge that reads an error code, fed ``code`` where its question went, and librdkafka's errors ``SAID``."""
    tplan, splan = acl_plans.target_acls(profile), acl_plans.source_acls(profile)
    spark = acl_plans.spark_group(profile)
    probe = profile.transactional_prefix + target.TRANSACTIONAL_PROBE
    created = {
        "names": {"src.orders.eu": 3},
        "described": {"src.orders.eu": ABSENT},
        "created": {"src.orders.eu": code},
    }
    own = {"secure_mirror.offset-map.src.internal": ABSENT}
    answers = {
        "visible": {"orders.eu": 3, "payments": 2},
        "named": {"names": [], "described": {}},
        "described": {"orders.eu": {"error": code}, "payments": {"partitions": 2, "operations": ["DESCRIBE", "READ"]}},
        "fetched": {},
        "group": {"name": spark, "described": {"error": code}},
        "said": SAID,
    }
    unasked = {**created, "described": {"src.orders.eu": {"error": code}}, "said": SAID}  # neither described
    judged = {
        "target.acl.topic-describe": target.topic_checks(profile, tplan, unasked)[1],
        "target.acl.topic-create": target.topic_checks(profile, tplan, {**created, "said": SAID})[3],
        "target.acl.group-topics": groups.group_topics_check(
            tplan, own, {"secure_mirror.offset-map.src.internal": code}, said=SAID, create_proof="p"
        ),
        "target.acl.group-read": groups.group_check(profile, tplan, "READ", {"app.orders": {"error": code}}, "c", SAID),
        "target.acl.transactional-id": target.transaction_check(profile, tplan, probe, code, SAID),
        "source.acl.group-describe": groups.source_check(profile, splan, {"app.orders": {"error": code}}, SAID),
        "source.acl.topic-describe-named": source.named_check(splan, ["payments"], {"payments": {"error": code}}, SAID),
    }
    for found in source.judge(profile, splan, answers)[1:]:
        judged[found.id] = found
    return judged


@pytest.mark.parametrize("code", NO_ANSWER_CODES)
def test_no_answer_leaves_every_acl_check_unverified_naming_the_broker_never_a_refusal(synced, code):
    judged = _judges(synced, code)
    assert sorted(judged) == [
        "source.acl.group-describe",
        "source.acl.group-read",
        "source.acl.topic-describe",
        "source.acl.topic-describe-named",
        "source.acl.topic-read",
        "target.acl.group-read",
        "target.acl.group-topics",
        "target.acl.topic-create",
        "target.acl.topic-describe",
        "target.acl.transactional-id",
    ]
    for check_id, found in judged.items():
        assert found.status == UNVERIFIED, found
        assert found.finding.endswith(
            f"is not known: the brokers gave no answer ({code}); this identity could not ask {BROKER_2}"
        )
        assert "refuse" not in found.finding + found.fix and "may not" not in found.finding, found
        assert found.fix.startswith(AGAIN.format(side=found.side)) and not found.acls, found
        assert found.proven_by, check_id  # each is proven by the audit (here "p" for the offset map's)


REFUSALS = {
    "TOPIC_AUTHORIZATION_FAILED": [
        "target.acl.topic-describe",
        "target.acl.topic-create",
        "target.acl.group-topics",
        "source.acl.topic-describe",
        "source.acl.topic-describe-named",
    ],
    "GROUP_AUTHORIZATION_FAILED": ["target.acl.group-read", "source.acl.group-describe", "source.acl.group-read"],
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": ["target.acl.transactional-id"],
}


@pytest.mark.parametrize(("code", "check_id"), [(code, c) for code, ids in REFUSALS.items() for c in ids])
def test_for_contrast_the_authorizers_refusal_fails_with_the_grant(synced, code, check_id):
    found = _judges(synced, code)[check_id]
    assert (found.status, bool(found.acls), found.proven_by) == (FAIL, True, ""), found
    assert "may not" in found.finding and "kafka-acls" in found.fix and "no answer" not in found.finding, found


def test_the_brokers_topic_policy_still_fails_as_theirs(synced):
    judged = _judges(synced, "POLICY_VIOLATION")
    for check_id in ("target.acl.topic-create", "target.acl.group-topics"):
        assert judged[check_id].status == FAIL and not judged[check_id].acls
        assert judged[check_id].finding.startswith("the broker would refuse to create"), judged[check_id]
