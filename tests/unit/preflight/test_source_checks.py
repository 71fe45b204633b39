"""The source's decisions (``preflight/checks/source.py``), fed answer dicts as ``ask`` returns them: the whole list
of checks, with exact ids, findings, fixes and the grants named from the source's ACL plan. No cluster."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import source
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, SKIPPED, UNVERIFIED, WARN, Check
from secure_mirror.render import acls as acl_plans
from tests.support import profiles as pf
from tests.unit.preflight.conftest import NO_SHAPE, SOURCE_BROKER, acl, commands, grant_fix

GROUPS = "consumer groups named secure-mirror-src-tgt*"
SPARK_GROUPS = "the consumer groups Spark will use (secure-mirror-src-tgt*)"
VISIBLE = {"orders.eu": 3, "payments": 2, "other": 1, "orders.tmp": 1}
READ_ORDERS = acl("READ", "TOPIC", "orders", "PREFIXED")
READ_GROUP = acl("READ", "GROUP", "secure-mirror-src-tgt-", "PREFIXED")


def described(orders=("DESCRIBE", "READ"), payments=("READ",)) -> dict:
    """The selected topics' descriptions: their operations (None: not reported) or an error code (a str)."""

    def one(partitions, ops):
        return {"error": ops} if isinstance(ops, str) else {"partitions": partitions, "operations": ops and list(ops)}

    return {"orders.eu": one(3, orders), "payments": one(2, payments)}


def answers(profile, topics=None, fetched=None, group=None, named=None) -> dict:
    return {
        "visible": VISIBLE,
        "named": named or {"names": [], "described": {}},
        "described": topics or described(),
        "fetched": fetched or {},
        "group": {
            "name": acl_plans.spark_group(profile),
            "described": {"operations": ["DESCRIBE", "READ"]},
            **(group or {}),
        },
    }


def selection(profile) -> Check:
    details = {"subscribe_pattern": profile.selection().java_pattern(), "count": 2, "topics": ["orders.eu", "payments"]}
    return Check("source.topics.selection", PASS, "2 topic(s) selected: orders.eu, payments", details=details)


def judged(profile, plan, **given) -> list[Check]:
    return source.judge(profile, plan, answers(profile, **given))


def test_every_permission_held(profile, source_plan):
    assert judged(profile, source_plan) == [
        selection(profile),
        Check("source.acl.topic-describe", PASS, "User:mirror may DESCRIBE all 2 selected topic(s)"),
        Check("source.acl.topic-read", PASS, "User:mirror may READ all 2 selected topic(s)"),
        Check("source.acl.group-read", PASS, f"User:mirror may READ {GROUPS}"),
    ]
    assert source.selected_partitions(profile, answers(profile)) == {"orders.eu": 3, "payments": 2}


def test_a_selection_that_picks_nothing_is_the_only_check(profile, source_plan):
    found = source.judge(profile, source_plan, {"visible": {"other": 1, "orders.tmp": 1}})
    assert found == [
        Check(
            "source.topics.selection",
            FAIL,
            "mirror.topics selects none of the 2 topic(s) User:mirror can see (subscribePattern "
            f"{profile.selection().java_pattern()})",
            "fix mirror.topics.include/exclude, or grant DESCRIBE on the topics if they exist but are hidden "
            "(run pre-flight --as-admin to see every topic)",
            details={"subscribe_pattern": profile.selection().java_pattern(), "count": 0, "topics": []},
        )
    ]
    assert source.selected_partitions(profile, {"visible": {"other": 1}}) == {}


def test_each_missing_grant_is_named_as_the_plan_grants_it(profile, source_plan):
    group = acl_plans.spark_group(profile)
    found = judged(
        profile,
        source_plan,
        topics=described(orders=("DESCRIBE",), payments="TOPIC_AUTHORIZATION_FAILED"),
        group={"described": {"error": "GROUP_AUTHORIZATION_FAILED"}},
    )
    describe_payments = acl("DESCRIBE", "TOPIC", "payments")
    assert found == [
        selection(profile),
        Check(
            "source.acl.topic-describe",
            FAIL,
            "User:mirror may not DESCRIBE 1 selected topic(s): payments",
            grant_fix("DESCRIBE", [describe_payments], SOURCE_BROKER),
            acls=[describe_payments],
            commands=commands([describe_payments], SOURCE_BROKER),
            details={"resources": ["payments"]},
        ),
        Check(
            "source.acl.topic-read",
            FAIL,
            "User:mirror may not READ 1 of 2 topic(s): orders.eu",
            "grant READ to User:mirror: kafka-acls.sh --bootstrap-server kafka.source.test:9093 --command-config "
            "admin.properties --add --allow-principal User:mirror --allow-host '*' --operation Read --topic orders "
            "--resource-pattern-type prefixed; if that ALLOW already exists a DENY overrides it: run pre-flight "
            "--as-admin to name it",
            acls=[READ_ORDERS],
            commands=commands([READ_ORDERS], SOURCE_BROKER),
            details={"resources": ["orders.eu"]},
        ),
        Check(
            "source.acl.group-read",
            FAIL,
            f"User:mirror may not READ {SPARK_GROUPS}",
            grant_fix("READ", [READ_GROUP], SOURCE_BROKER),
            acls=[READ_GROUP],
            commands=commands([READ_GROUP], SOURCE_BROKER),
            details={"resources": [group]},
        ),
    ]


def test_read_is_skipped_for_topics_without_describe(profile, source_plan):
    found = judged(profile, source_plan, topics=described(payments="TOPIC_AUTHORIZATION_FAILED"))
    assert [(c.id, c.status) for c in found] == [
        ("source.topics.selection", PASS),
        ("source.acl.topic-describe", FAIL),
        ("source.acl.topic-read", SKIPPED),
        ("source.acl.group-read", PASS),
    ]
    assert found[2] == Check(
        "source.acl.topic-read", SKIPPED, "skipped for topics without DESCRIBE; READ holds on the others"
    )


def test_several_grants_are_counted_in_the_fix(profile, source_plan):
    found = judged(profile, source_plan, topics=described(orders=("DESCRIBE",), payments=("DESCRIBE",)))
    read = found[2]
    grants = [READ_ORDERS, acl("READ", "TOPIC", "payments")]
    assert read == Check(
        "source.acl.topic-read",
        FAIL,
        "User:mirror may not READ 2 of 2 topic(s): orders.eu, payments",
        grant_fix("READ", grants, SOURCE_BROKER),
        acls=grants,
        commands=commands(grants, SOURCE_BROKER),
        details={"resources": ["orders.eu", "payments"]},
    )
    assert "(+1 more)" in read.fix


# ---- brokers before Kafka 2.3: no authorized operations; READ asked by fetching, the group by joining -------------
UNREPORTED = described(orders=None, payments=None)


@pytest.mark.parametrize(
    ("fetched", "expected"),
    [
        ({"orders.eu": None, "payments": None}, (PASS, "User:mirror may READ all 2 selected topic(s)", "", "", {})),
        (
            {"orders.eu": None, "payments": "TOPIC_AUTHORIZATION_FAILED"},
            (FAIL, "User:mirror may not READ 1 of 2 topic(s): payments", "fix", "", {"resources": ["payments"]}),
        ),
        (
            {"orders.eu": None, "payments": "NO_ANSWER"},
            (
                UNVERIFIED,
                "the brokers did not answer a fetch of payments",
                PROVE_WITH_AUDIT,
                "source.audit.topic-read",
                {"resources": ["payments"]},
            ),
        ),
    ],
)
def test_read_on_old_brokers_is_asked_by_fetching(profile, source_plan, fetched, expected):
    status, finding, fix, proven_by, details = expected
    read_payments = acl("READ", "TOPIC", "payments")
    grants = [read_payments] if status == FAIL else []
    if status == UNVERIFIED:
        finding += f"{source.OLD_BROKER}: READ is not known"
    else:
        finding += source.OLD_BROKER
    fix = grant_fix("READ", grants, SOURCE_BROKER) if fix == "fix" else fix
    found = judged(profile, source_plan, topics=UNREPORTED, fetched=fetched)
    assert found[2] == Check(
        "source.acl.topic-read",
        status,
        finding,
        fix,
        acls=grants,
        commands=commands(grants, SOURCE_BROKER),
        details=details,
        proven_by=proven_by,
    )
    assert found[1] == Check("source.acl.topic-describe", PASS, "User:mirror may DESCRIBE all 2 selected topic(s)")
    assert source.OLD_BROKER == (
        " (asked by fetching at the end of each topic's first partition, no record kept: the brokers, "
        "older than Kafka 2.3, report no authorized operations)"
    )


def _how(group: str) -> str:
    return (
        f" (asked by joining {group} for orders.eu and leaving it: the brokers, older than Kafka 2.3, report no "
        "authorized operations)"
    )


def test_group_read_on_old_brokers_is_asked_by_joining(profile, source_plan):
    group = acl_plans.spark_group(profile)

    def check(joined):
        answer = {"name": group, "described": {"operations": None}, "joined": joined}
        return source.group_check(profile, source_plan, answer)

    joined = {"topic": "orders.eu", "code": None}
    assert check(joined) == Check("source.acl.group-read", PASS, f"User:mirror may READ {GROUPS}{_how(group)}")
    assert check({**joined, "code": "GROUP_AUTHORIZATION_FAILED"}) == Check(
        "source.acl.group-read",
        FAIL,
        f"User:mirror may not READ {SPARK_GROUPS}{_how(group)}",
        grant_fix("READ", [READ_GROUP], SOURCE_BROKER),
        acls=[READ_GROUP],
        commands=commands([READ_GROUP], SOURCE_BROKER),
        details={"resources": [group]},
    )
    assert check({**joined, "code": "NO_ANSWER"}) == Check(
        "source.acl.group-read",
        UNVERIFIED,
        f"joining {group} got no answer{_how(group)}: READ on the group is not known",
        PROVE_WITH_AUDIT,
        proven_by="source.audit.group-read",
    )
    assert check(None) == Check(
        "source.acl.group-read", SKIPPED, "skipped: no selected topic to join a consumer group for"
    )


def test_a_group_coordinator_that_gives_no_answer_leaves_group_read_unverified_never_a_pass(profile, source_plan):
    """Not a warning (which passes): READ on the group was not asked; the audit proves it (issue 58)."""
    group = acl_plans.spark_group(profile)
    answer = {"name": group, "described": {"error": "COORDINATOR_NOT_AVAILABLE"}}
    assert source.group_check(profile, source_plan, answer) == Check(
        "source.acl.group-read",
        UNVERIFIED,
        f"whether User:mirror may READ {SPARK_GROUPS} is not known: the brokers gave no answer "
        "(COORDINATOR_NOT_AVAILABLE)",
        "run pre-flight again once every source broker answers (source.kafka.brokers names those that do not), or "
        + PROVE_WITH_AUDIT,
        proven_by="source.audit.group-read",
        details={"resources": [group]},
    )


# ---- issue 58, point 7: a broker away is not a missing grant --------------------------------------------------------
SAID = ["sasl_ssl://kafka-2.source.test:9094/2: SASL authentication error: Authentication failed"]
NOT_ASKED = (
    "the brokers gave no answer (_TIMED_OUT); this identity could not ask broker 2 (kafka-2.source.test:9094): SASL "
    "authentication error: Authentication failed"
)
AGAIN = "run pre-flight again once every source broker answers (source.kafka.brokers names those that do not), or "


def test_a_description_the_brokers_did_not_answer_leaves_describe_and_read_unverified_not_refused(profile, source_plan):
    """It read "may not DESCRIBE 1 selected topic(s)": a grant named missing for a timeout."""
    found = source.judge(
        profile, source_plan, {**answers(profile, topics=described(payments="_TIMED_OUT")), "said": SAID}
    )
    assert found[1:3] == [
        Check(
            "source.acl.topic-describe",
            UNVERIFIED,
            f"whether User:mirror may DESCRIBE payments is not known: {NOT_ASKED}",
            AGAIN + PROVE_WITH_AUDIT,
            proven_by="source.audit.topic-describe",
            details={"resources": ["payments"]},
        ),
        Check(
            "source.acl.topic-read",
            UNVERIFIED,
            f"whether User:mirror may READ payments is not known: {NOT_ASKED}",
            AGAIN + PROVE_WITH_AUDIT,
            proven_by="source.audit.topic-read",
            details={"resources": ["payments"]},
        ),
    ]


# ---- a topic the include names literally ----------------------------------------------------------------------------
@pytest.fixture
def naming(tmp_path):
    """``refunds`` named literally, ``refunds.tmp`` too (but excluded)."""
    return pf.load(
        tmp_path,
        topics={"include": "orders.*,payments,refunds,refunds\\.tmp", "exclude": ".*\\.tmp"},
        topic_shape=NO_SHAPE,
    )


def test_the_named_topics_asked_about_are_those_the_selection_keeps_and_the_identity_does_not_see(naming):
    assert source.named_literals(naming, set(VISIBLE)) == ["refunds"]
    assert source.named_literals(naming, {*VISIBLE, "refunds"}) == []


def test_a_named_topic_hidden_from_the_identity_fails_after_the_selection(naming):
    plan = acl_plans.source_acls(naming)
    named = {"names": ["refunds"], "described": {"refunds": {"error": "TOPIC_AUTHORIZATION_FAILED"}}}
    found = source.judge(naming, plan, answers(naming, named=named))
    describe_refunds = acl("DESCRIBE", "TOPIC", "refunds")
    assert found[1] == Check(
        "source.acl.topic-describe-named",
        FAIL,
        "mirror.topics names refunds, which User:mirror may not DESCRIBE: it would not be mirrored, silently",
        grant_fix("DESCRIBE", [describe_refunds], SOURCE_BROKER),
        acls=[describe_refunds],
        commands=commands([describe_refunds], SOURCE_BROKER),
        details={"resources": ["refunds"]},
    )
    assert [c.id for c in found] == [
        "source.topics.selection",
        "source.acl.topic-describe-named",
        "source.acl.topic-describe",
        "source.acl.topic-read",
        "source.acl.group-read",
    ]


def test_a_named_topic_that_does_not_exist_warns(naming):
    plan = acl_plans.source_acls(naming)
    assert source.named_check(plan, ["refunds"], {"refunds": {"error": "UNKNOWN_TOPIC_OR_PART"}}) == Check(
        "source.acl.topic-describe-named",
        WARN,
        "mirror.topics names refunds, which does not exist on the source (yet); it is mirrored once it exists",
        "create the topic, or fix mirror.topics.include",
    )
    assert source.named_check(plan, [], {}) is None


def test_a_topic_only_a_regex_selects_is_granted_by_name(tmp_path):
    """Render cannot grant a regex: the plan holds it unresolved, and the grant pre-flight names is LITERAL."""
    profile = pf.load(tmp_path, topics={"include": "(eu|us)\\.sales"})
    plan = acl_plans.source_acls(profile)
    topics = {"eu.sales": {"partitions": 1, "operations": ["DESCRIBE"]}}
    answer = {**answers(profile, topics=topics), "visible": {"eu.sales": 1, "other": 1}}
    read = source.judge(profile, plan, answer)[2]
    grant = acl("READ", "TOPIC", "eu.sales")
    assert (read.id, read.status, read.acls, read.fix) == (
        "source.acl.topic-read",
        FAIL,
        [grant],
        grant_fix("READ", [grant], SOURCE_BROKER),
    )


def test_a_named_topic_the_brokers_did_not_answer_about_is_not_said_to_be_missing(naming):
    plan = acl_plans.source_acls(naming)
    assert source.named_check(plan, ["refunds"], {"refunds": {"error": "_TIMED_OUT"}}, SAID) == Check(
        "source.acl.topic-describe-named",
        UNVERIFIED,
        f"whether refunds, named by mirror.topics, exist(s) and User:mirror may DESCRIBE it is not known: {NOT_ASKED}",
        AGAIN + PROVE_WITH_AUDIT,
        proven_by="source.audit.topic-describe",
        details={"resources": ["refunds"]},
    )
