"""The target's decisions (``preflight/checks/target.py``), fed answer dicts as its probes return them: the whole
list of checks with exact ids, findings, fixes and the grants named from the target's ACL plan. No cluster."""

from __future__ import annotations

import pytest

from secure_mirror.kafka.acl import kafka_acls_command
from secure_mirror.preflight.checks import target
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, SKIPPED, UNVERIFIED, WARN, Check
from secure_mirror.preflight.probes.api_versions import BrokerApis
from secure_mirror.render import acls as acl_plans
from tests.support import profiles as pf
from tests.unit.preflight.conftest import NO_SHAPE, TARGET_BROKER, acl, commands, grant_fix
from tests.unit.preflight.test_unanswered import SAID, SASL

NAMES = {"src.orders.eu": 3, "src.payments": 2}
WRITABLE = ["DESCRIBE", "WRITE"]
ABSENT = {"error": "UNKNOWN_TOPIC_OR_PART"}
HIDDEN = {"error": "TOPIC_AUTHORIZATION_FAILED"}
WRITE_PROOF = "target.audit.topic-write"


def answers(orders=None, payments=None, created=None, names=None) -> dict:
    return {
        "names": names or NAMES,
        "described": {
            "src.orders.eu": orders or {"partitions": 3, "operations": WRITABLE},
            "src.payments": payments or {"partitions": 2, "operations": WRITABLE},
        },
        "created": created or {},
    }


def judged(profile, plan, **given) -> list[Check]:
    return target.topic_checks(profile, plan, answers(**given))


def test_every_topic_exists_and_may_be_written(profile, target_plan):
    assert judged(profile, target_plan) == [
        Check(
            "target.topics.partitions",
            PASS,
            "2 existing target topic(s) match their source's partition count; 0 to create",
        ),
        Check("target.acl.topic-describe", PASS, "User:mirror may DESCRIBE all 2 target topic(s)"),
        Check("target.acl.topic-write", PASS, "User:mirror may WRITE all 2 existing target topic(s)"),
        Check("target.acl.topic-create", PASS, "every target topic exists; nothing to create"),
    ]


def test_write_on_a_topic_still_to_create_is_unverified_and_create_passes(profile, target_plan):
    assert judged(profile, target_plan, payments=ABSENT, created={"src.payments": None}) == [
        Check(
            "target.topics.partitions",
            PASS,
            "1 existing target topic(s) match their source's partition count; 1 to create",
        ),
        Check("target.acl.topic-describe", PASS, "User:mirror may DESCRIBE all 2 target topic(s)"),
        Check(
            "target.acl.topic-write",
            UNVERIFIED,
            "WRITE holds on the 1 existing one(s); WRITE on the 1 target topic(s) still to create (src.payments) cannot "
            "be asked before they exist",
            PROVE_WITH_AUDIT,
            details={"resources": ["src.payments"]},
            proven_by=WRITE_PROOF,
        ),
        Check(
            "target.acl.topic-create",
            PASS,
            "User:mirror may CREATE the 1 missing target topic(s) (src.payments); checked with validate_only, nothing "
            "was created",
        ),
    ]


def test_with_no_topic_yet_write_names_only_those_to_create(profile, target_plan):
    created = {"src.orders.eu": None, "src.payments": None}
    write = judged(profile, target_plan, orders=ABSENT, payments=ABSENT, created=created)[2]
    assert write.finding == (
        "WRITE on the 2 target topic(s) still to create (src.orders.eu, src.payments) cannot be asked before they exist"
    )


def test_each_missing_grant_is_named_as_the_plan_grants_it(profile, target_plan):
    found = judged(
        profile,
        target_plan,
        orders={"partitions": 3, "operations": ["DESCRIBE"]},
        payments=HIDDEN,
        created={"src.payments": "TOPIC_AUTHORIZATION_FAILED"},
    )
    describe, write, create = (
        acl("DESCRIBE", "TOPIC", "src.payments"),
        acl("WRITE", "TOPIC", "src.orders", "PREFIXED"),
        acl("CREATE", "TOPIC", "src.payments"),
    )
    assert found == [
        Check(
            "target.topics.partitions",
            PASS,
            "1 existing target topic(s) match their source's partition count; 1 to create",
        ),
        Check(
            "target.acl.topic-describe",
            FAIL,
            "User:mirror may not DESCRIBE 1 target topic(s): src.payments",
            grant_fix("DESCRIBE", [describe], TARGET_BROKER),
            acls=[describe],
            commands=commands([describe], TARGET_BROKER),
            details={"resources": ["src.payments"]},
        ),
        Check(
            "target.acl.topic-write",
            FAIL,
            "User:mirror may not WRITE 1 of 1 existing target topic(s): src.orders.eu",
            "grant WRITE to User:mirror: kafka-acls.sh --bootstrap-server kafka.target.test:9093 --command-config "
            "admin.properties --add --allow-principal User:mirror --allow-host '*' --operation Write --topic src.orders "
            "--resource-pattern-type prefixed; if that ALLOW already exists a DENY overrides it: run pre-flight "
            "--as-admin to name it",
            acls=[write],
            commands=commands([write], TARGET_BROKER),
            details={"resources": ["src.orders.eu"]},
        ),
        Check(
            "target.acl.topic-create",
            FAIL,
            "User:mirror may not CREATE 1 missing target topic(s): src.payments",
            grant_fix("CREATE", [create], TARGET_BROKER),
            acls=[create],
            commands=commands([create], TARGET_BROKER),
            details={"resources": ["src.payments"]},
        ),
    ]


def test_a_topic_that_exists_but_was_not_described_leaves_describe_unverified_naming_no_grant(profile, target_plan):
    """Its description failed with another error than a refusal, however long asked
    (``kafka_admin.topics.appeared``)."""
    leaderless = {"error": "LEADER_NOT_AVAILABLE"}
    found = judged(profile, target_plan, payments=leaderless, created={"src.payments": "TOPIC_ALREADY_EXISTS"})
    describe = next(c for c in found if c.id == "target.acl.topic-describe")
    assert describe == Check(
        "target.acl.topic-describe",
        UNVERIFIED,
        "1 topic(s) exist but the brokers did not describe them (src.payments: LEADER_NOT_AVAILABLE); "
        "whether User:mirror may DESCRIBE them is not known",
        "run pre-flight again once the brokers describe these topics (kafka-topics.sh --describe, as an admin)",
        details={"resources": ["src.payments"]},
    )
    assert [c.status for c in found if c.id != describe.id] == [PASS, PASS, PASS]
    # hidden as well as undescribed: the refusal is the finding, with its grant
    both = judged(
        profile,
        target_plan,
        orders=HIDDEN,
        payments=leaderless,
        created={"src.payments": "TOPIC_ALREADY_EXISTS", "src.orders.eu": "TOPIC_ALREADY_EXISTS"},
    )
    hidden = next(c for c in both if c.id == "target.acl.topic-describe")
    assert (hidden.status, hidden.finding) == (FAIL, "User:mirror may not DESCRIBE 1 target topic(s): src.orders.eu")


def test_a_topic_that_exists_but_is_hidden_fails_describe_only(profile, target_plan):
    found = judged(profile, target_plan, payments=HIDDEN, created={"src.payments": "TOPIC_ALREADY_EXISTS"})
    assert [(c.id, c.status, c.finding) for c in found] == [
        (
            "target.topics.partitions",
            PASS,
            "1 existing target topic(s) match their source's partition count; 0 to create",
        ),
        ("target.acl.topic-describe", FAIL, "User:mirror may not DESCRIBE 1 target topic(s): src.payments"),
        ("target.acl.topic-write", PASS, "User:mirror may WRITE all 1 existing target topic(s)"),
        ("target.acl.topic-create", PASS, "every target topic exists; nothing to create"),
    ]


def test_a_topic_the_broker_would_refuse_for_another_reason(profile, target_plan):
    create = judged(profile, target_plan, payments=ABSENT, created={"src.payments": "POLICY_VIOLATION"})[3]
    assert create == Check(
        "target.acl.topic-create",
        FAIL,
        "the broker would refuse to create src.payments: POLICY_VIOLATION",
        "create the topics yourself, or fix the broker's topic policy",
    )


def test_old_brokers_leave_write_unverified(profile, target_plan):
    unreported = {"partitions": 3, "operations": None}
    write = judged(profile, target_plan, orders=unreported, payments=ABSENT, created={"src.payments": None})[2]
    assert write == Check(
        "target.acl.topic-write",
        UNVERIFIED,
        "the brokers, older than Kafka 2.3, report no authorized operations: WRITE on 1 existing target topic(s) "
        "(src.orders.eu) cannot be asked without writing, nor on the 1 still to create",
        PROVE_WITH_AUDIT,
        details={"resources": ["src.orders.eu", "src.payments"]},
        proven_by=WRITE_PROOF,
    )


NOT_GROWN = "target topic src.orders.eu has 2 partitions and its source has 3, and the mirror will not add them"
GROW_FIX = (
    "add partitions to it (kafka-topics.sh --alter --topic src.orders.eu --partitions 3), or keep "
    "mirror.topic_shape.grow_partitions on with keep_partition true or auto and grant the mirror identity ALTER on it"
)


@pytest.mark.parametrize(
    ("keep", "shape", "partitions", "status", "finding", "fix"),
    [
        ("auto", NO_SHAPE, 2, WARN, NOT_GROWN, GROW_FIX),
        (True, NO_SHAPE, 2, FAIL, NOT_GROWN, GROW_FIX),
        (
            True,
            {},  # growth on: the job adds the partition before it writes
            2,
            PASS,
            "1 existing target topic(s) match their source's partition count; the job adds partitions to 1 "
            "(src.orders.eu) before it writes; 0 to create",
            "",
        ),
        (
            "auto",
            {},
            4,
            WARN,
            "target topic src.orders.eu has 4 partitions and its source has 3, and Kafka removes no partitions: "
            "records do not keep their partition numbers",
            "recreate src.orders.eu with 3 partitions (or add partitions to the source topic)",
        ),
    ],
)
def test_partition_counts(tmp_path, keep, shape, partitions, status, finding, fix):
    profile = pf.load(tmp_path, keep_partition=keep, topic_shape=shape)
    plan = acl_plans.target_acls(profile)
    found = judged(profile, plan, orders={"partitions": partitions, "operations": WRITABLE})
    assert (found[0].id, found[0].status, found[0].finding, found[0].fix) == (
        "target.topics.partitions",
        status,
        finding,
        fix,
    )


# ---- the idempotent producer ----------------------------------------------------------------------------------------
KAFKA_2_8 = BrokerApis({3: (0, 12), 60: (0, 1)})
KAFKA_2_5 = BrokerApis({3: (0, 9)})
KAFKA_2_2 = BrokerApis({3: (0, 7)})
IDEMPOTENT = acl("IDEMPOTENT_WRITE", "CLUSTER", "kafka-cluster")
IDEMPOTENT_PROOF = "target.audit.cluster-idempotent-write"


def test_since_kafka_2_8_write_allows_the_idempotent_producer(target_plan):
    assert target.idempotent_check(target_plan, {"apis": KAFKA_2_8}) == Check(
        "target.acl.idempotent-write",
        PASS,
        "the brokers run Kafka 2.8 or later (they offer DescribeCluster), where WRITE on the target topics allows "
        "the idempotent producer (KIP-679); no IDEMPOTENT_WRITE needed",
    )


@pytest.mark.parametrize("operations", [["DESCRIBE", "IDEMPOTENT_WRITE"], ["ALL"]])
def test_before_kafka_2_8_idempotent_write_granted(target_plan, operations):
    assert target.idempotent_check(target_plan, {"apis": KAFKA_2_5, "operations": operations}) == Check(
        "target.acl.idempotent-write",
        PASS,
        "the brokers run Kafka 2.3 to 2.7, where the idempotent producer needs IDEMPOTENT_WRITE on the cluster: "
        "User:mirror has it",
    )


def test_before_kafka_2_8_idempotent_write_missing_is_the_plans_older_broker_grant(target_plan):
    assert target.idempotent_check(target_plan, {"apis": KAFKA_2_5, "operations": ["DESCRIBE"]}) == Check(
        "target.acl.idempotent-write",
        FAIL,
        "the brokers run Kafka 2.3 to 2.7, where the idempotent producer needs IDEMPOTENT_WRITE on the cluster, "
        "which User:mirror lacks",
        "grant IDEMPOTENT_WRITE to User:mirror: kafka-acls.sh --bootstrap-server kafka.target.test:9093 "
        "--command-config admin.properties --add --allow-principal User:mirror --allow-host '*' --operation "
        "IdempotentWrite --cluster --resource-pattern-type literal; if that ALLOW already exists a DENY overrides it: "
        "run pre-flight --as-admin to name it",
        acls=[IDEMPOTENT],
        commands=commands([IDEMPOTENT], TARGET_BROKER),
        details={"resources": ["kafka-cluster"]},
    )
    assert target_plan.older_brokers == [IDEMPOTENT] and IDEMPOTENT not in target_plan.bindings  # never rendered


def test_before_kafka_2_3_idempotent_write_is_unverified_with_its_grant(target_plan):
    command = kafka_acls_command(IDEMPOTENT, TARGET_BROKER)
    assert target.idempotent_check(target_plan, {"apis": KAFKA_2_2, "operations": None}) == Check(
        "target.acl.idempotent-write",
        UNVERIFIED,
        "the brokers run a Kafka older than 2.3: the idempotent producer needs IDEMPOTENT_WRITE on the cluster, and "
        "such brokers do not report whether it is granted",
        f"grant it ({command}), then {PROVE_WITH_AUDIT}",
        acls=[IDEMPOTENT],
        commands=[command],
        proven_by=IDEMPOTENT_PROOF,
    )


def test_a_kafka_line_not_known_leaves_idempotence_unverified(target_plan):
    answer = {"error": "cannot ask kafka.target.test:9093 for its API versions: timed out"}
    assert target.idempotent_check(target_plan, answer) == Check(
        "target.acl.idempotent-write",
        UNVERIFIED,
        "the brokers' Kafka line is not known (cannot ask kafka.target.test:9093 for its API versions: timed out): "
        "whether the idempotent producer needs IDEMPOTENT_WRITE on the cluster is not known",
        PROVE_WITH_AUDIT,
        proven_by=IDEMPOTENT_PROOF,
    )


# ---- exactly_once's transactional ids -------------------------------------------------------------------------------
@pytest.fixture
def eos(tmp_path):
    return pf.load(tmp_path, delivery={"guarantee": "exactly_once"}, heartbeats=NO_HEARTBEATS, topic_shape=NO_SHAPE)


PREFIX = "secure-mirror-src-tgt-eos-"
NO_HEARTBEATS = {"interval_seconds": 0}  # the step tests below ask nothing about the heartbeats topic
PROBE = f"{PREFIX}preflight"
HOW = f" (asked by registering the transactional id {PROBE}, which writes no record)"


def test_transactional_ids(eos):
    plan = acl_plans.target_acls(eos)
    grant = acl("WRITE", "TRANSACTIONAL_ID", PREFIX, "PREFIXED")
    assert target.transaction_check(eos, plan, PROBE, None) == Check(
        "target.acl.transactional-id", PASS, f"User:mirror may use the transactional ids {PREFIX}*{HOW}"
    )
    assert target.transaction_check(eos, plan, PROBE, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED") == Check(
        "target.acl.transactional-id",
        FAIL,
        f"User:mirror may not WRITE the transactional ids {PREFIX}* that exactly_once needs{HOW}",
        grant_fix("WRITE", [grant], TARGET_BROKER),
        acls=[grant],
        commands=commands([grant], TARGET_BROKER),
        details={"resources": [PROBE]},
    )
    assert target.transaction_check(eos, plan, PROBE, "_TIMED_OUT") == Check(
        "target.acl.transactional-id",
        UNVERIFIED,
        f"whether User:mirror may use the transactional ids {PREFIX}*{HOW} is not known: the brokers gave no answer "
        "(_TIMED_OUT)",
        "run pre-flight again once every target broker answers (target.kafka.brokers names those that do not), or "
        + PROVE_WITH_AUDIT,
        proven_by="target.audit.transactional_id-write",
        details={"resources": [PROBE]},
    )
    # an authorization error of another grant than the id's (CLUSTER_AUTHORIZATION_FAILED): not known, as before
    assert target.transaction_check(eos, plan, PROBE, "CLUSTER_AUTHORIZATION_FAILED") == Check(
        "target.acl.transactional-id",
        UNVERIFIED,
        f"registering the transactional id {PROBE} got CLUSTER_AUTHORIZATION_FAILED: whether User:mirror may use the "
        f"ids {PREFIX}* is not known",
        PROVE_WITH_AUDIT,
        proven_by="target.audit.transactional_id-write",
    )


# ---- the step: what is asked, in which order, and what a failed WRITE skips ----------------------------------------
class Asked:
    """The target's probes, answering from dicts and recording what was asked."""

    def __init__(self, monkeypatch, described, created, apis=KAFKA_2_8, transaction=None, said=()):
        self.calls: list[str] = []
        self.said = list(said)  # librdkafka's client-level errors (``kafka_admin.said``)
        monkeypatch.setattr(target, "client_conf", lambda cluster, side: {})
        monkeypatch.setattr(target.kafka_admin, "Admin", lambda conf, timeout: "admin")
        monkeypatch.setattr(target.kafka_admin, "said", lambda admin: self.said)
        monkeypatch.setattr(target.tls, "context_for", lambda settings: "tls context")
        monkeypatch.setattr(
            target.topic_probes,
            "describe_topics",
            self.record("describe", lambda a, names: {n: d for n, d in described.items() if n in names}),
        )
        monkeypatch.setattr(
            target.topic_probes,
            "validate_create",
            self.record("create", lambda a, t: {n: c for n, c in created.items() if n in t}),
        )
        monkeypatch.setattr(
            target.transaction_probes, "transaction_probe", self.record("transaction", lambda a, i: transaction)
        )
        monkeypatch.setattr(target.api_versions, "answer", self.record("api_versions", lambda *a: {"apis": apis}))
        monkeypatch.setattr(
            target.cluster_probes, "describe_cluster", self.record("cluster", lambda a: {"operations": []})
        )

    def record(self, name, answer):
        def called(*args):
            self.calls.append(name)
            return answer(*args)

        return called


def test_a_failed_write_skips_the_idempotent_producer_without_asking(monkeypatch, eos):
    described = {"src.orders.eu": {"partitions": 3, "operations": ["DESCRIBE"]}}
    asked = Asked(monkeypatch, described, {})
    found = target.target_side(eos, 1.0, {"orders.eu": 3})
    assert [(c.id, c.status) for c in found] == [
        ("target.topics.partitions", PASS),
        ("target.acl.topic-describe", PASS),
        ("target.acl.topic-write", FAIL),
        ("target.acl.topic-create", PASS),
        ("target.acl.idempotent-write", SKIPPED),
        ("target.acl.transactional-id", PASS),
    ]
    assert found[4] == Check("target.acl.idempotent-write", SKIPPED, "skipped: needs target.acl.topic-write to pass")
    assert asked.calls == ["describe", "create", "transaction"]


def test_without_idempotence_nor_transactions_nothing_more_is_asked(monkeypatch, tmp_path):
    profile = pf.load(tmp_path, delivery={"enable_idempotence": False}, heartbeats=NO_HEARTBEATS, topic_shape=NO_SHAPE)
    asked = Asked(monkeypatch, {"src.orders.eu": {"partitions": 3, "operations": WRITABLE}}, {})
    found = target.target_side(profile, 1.0, {"orders.eu": 3})
    assert [c.id for c in found] == [
        "target.topics.partitions",
        "target.acl.topic-describe",
        "target.acl.topic-write",
        "target.acl.topic-create",
    ]
    assert asked.calls == ["describe", "create"]


def test_before_kafka_2_8_the_clusters_operations_are_asked(monkeypatch, tmp_path):
    profile = pf.load(tmp_path, heartbeats=NO_HEARTBEATS, topic_shape=NO_SHAPE)
    asked = Asked(monkeypatch, {"src.orders.eu": {"partitions": 3, "operations": WRITABLE}}, {}, apis=KAFKA_2_5)
    found = target.target_side(profile, 1.0, {"orders.eu": 3})
    assert found[-1].id == "target.acl.idempotent-write" and found[-1].status == FAIL
    assert asked.calls == ["describe", "create", "api_versions", "cluster"]


@pytest.mark.parametrize(
    ("heartbeats", "created", "status"),
    [
        ({"partitions": 1, "operations": ["DESCRIBE", "WRITE", "READ"]}, {}, PASS),
        ({"partitions": 1, "operations": ["DESCRIBE", "READ"]}, {}, FAIL),  # no WRITE on it
        ({"error": "TOPIC_AUTHORIZATION_FAILED"}, {}, FAIL),  # not even DESCRIBE
        ({"error": "UNKNOWN_TOPIC_OR_PART"}, {"heartbeats": None}, UNVERIFIED),  # to create: WRITE unknown
        ({"error": "UNKNOWN_TOPIC_OR_PART"}, {"heartbeats": "TOPIC_AUTHORIZATION_FAILED"}, FAIL),  # no CREATE
        ({"error": "UNKNOWN_TOPIC_OR_PART"}, {"heartbeats": "_TIMED_OUT"}, UNVERIFIED),  # no answer: not a refusal
    ],
)
def test_the_heartbeats_topic_is_asked_about_and_judged(monkeypatch, tmp_path, heartbeats, created, status):
    """With heartbeats on (the default), the identity must DESCRIBE, CREATE (when missing) and WRITE the target's
    heartbeats topic; a grant it lacks fails with the plan's grant, WRITE on a topic still to create is unverified."""
    profile = pf.load(tmp_path, delivery={"enable_idempotence": False})
    described = {"src.orders.eu": {"partitions": 3, "operations": WRITABLE}, "heartbeats": heartbeats}
    asked = Asked(monkeypatch, described, created)
    found = {c.id: c for c in target.target_side(profile, 1.0, {"orders.eu": 3})}
    beats = found["target.acl.heartbeats-topic"]
    assert beats.status == status, beats
    if status == FAIL:
        assert "heartbeats" in beats.finding and "kafka-acls" in beats.fix
    assert asked.calls[:2] == ["describe", "create"] and "describe" in asked.calls[2:]


# ---- issue 58, point 7: a broker away is not a missing grant ----------------------------------------------------------
NOT_ASKED = (
    f"the brokers gave no answer (_TIMED_OUT); this identity could not ask broker 2 (kafka-2.target.test:9094): {SASL}"
)
AGAIN = "run pre-flight again once every target broker answers (target.kafka.brokers names those that do not), or "


def test_requests_a_broker_that_cannot_be_logged_in_to_did_not_answer_are_unverified_naming_it(monkeypatch, tmp_path):
    """Target broker 2's key changed in the KDC: the validate-only creates and the transaction sent its way timed out.
    ``kafka.brokers`` fails naming it; the checks those requests answer say what is not known and name it, with no
    grant and no word of a refusal (they read "the broker would refuse to create ...: _TIMED_OUT")."""
    profile = pf.load(tmp_path, delivery={"guarantee": "exactly_once"}, topic_shape=NO_SHAPE)  # heartbeats on
    described = {"src.orders.eu": ABSENT, "heartbeats": ABSENT}
    created = {"src.orders.eu": "_TIMED_OUT", "heartbeats": "_TIMED_OUT"}
    Asked(monkeypatch, described, created, transaction="_TIMED_OUT", said=SAID)
    found = {c.id: c for c in target.target_side(profile, 1.0, {"orders.eu": 3})}
    assert {i: c.status for i, c in found.items()} == {
        "target.topics.partitions": PASS,
        "target.acl.topic-describe": PASS,  # described: it does not exist
        "target.acl.topic-write": UNVERIFIED,  # still to create
        "target.acl.topic-create": UNVERIFIED,
        "target.acl.heartbeats-topic": UNVERIFIED,
        "target.acl.idempotent-write": PASS,
        "target.acl.transactional-id": UNVERIFIED,
    }
    assert found["target.acl.topic-create"] == Check(
        "target.acl.topic-create",
        UNVERIFIED,
        f"whether User:mirror may CREATE 1 missing target topic(s) (src.orders.eu) is not known: {NOT_ASKED}",
        AGAIN + PROVE_WITH_AUDIT,
        details={"resources": ["src.orders.eu"]},
        proven_by="target.audit.topic-create",
    )
    assert found["target.acl.heartbeats-topic"] == Check(
        "target.acl.heartbeats-topic",
        UNVERIFIED,
        "whether User:mirror may CREATE heartbeats, the topic(s) the mirror keeps for its heartbeats (MirrorMaker 2's "
        f"heartbeats topic, docs/heartbeats.md) is not known: {NOT_ASKED}",
        AGAIN + "accept it knowingly (secure-mirror run --accept-unverified)",  # the audit does not evaluate it
        details={"resources": ["heartbeats"]},
    )
    assert found["target.acl.transactional-id"].finding.endswith(f"is not known: {NOT_ASKED}")
    for c in found.values():
        assert "refuse" not in c.finding + c.fix and not c.acls, c


def test_a_topic_neither_described_nor_created_for_want_of_an_answer_leaves_describe_unverified(profile, target_plan):
    timed_out = {"error": "_TIMED_OUT"}
    found = target.topic_checks(
        profile, target_plan, {**answers(payments=timed_out, created={"src.payments": "_TIMED_OUT"}), "said": SAID}
    )
    assert found[1] == Check(
        "target.acl.topic-describe",
        UNVERIFIED,
        f"whether User:mirror may DESCRIBE src.payments is not known: {NOT_ASKED}",
        AGAIN + PROVE_WITH_AUDIT,
        details={"resources": ["src.payments"]},
        proven_by="target.audit.topic-describe",
    )
    # the description not answered, but the create says the topic is absent and may be created: nothing hidden
    creatable = target.topic_checks(profile, target_plan, answers(payments=timed_out, created={"src.payments": None}))
    assert [c.status for c in creatable] == [PASS, PASS, UNVERIFIED, PASS]
