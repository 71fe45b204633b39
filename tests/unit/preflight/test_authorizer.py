"""Kafka's StandardAuthorizer rules, reproduced by secure_mirror.preflight.authorizer (pure, no broker): every case
is decided by ``authorize`` (the rules read over every ACL) and by ``authorize_all`` (many resources at once, by
pattern), which must agree, on these cases and on large generated ones; and Kafka's own ``StandardAuthorizer`` (the
KRaft brokers' authorizer, from the Kafka jars in .deps) judges every case asked from a client's address, written
and generated, through tests/support/StandardAuthorizerCases.java: one JVM for the module, fed one batch of ACLs and
actions at a time."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterable

import pytest

from secure_mirror import paths
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.authorizer import Patterns, authorize, authorize_all
from tests.support import seeds
from tests.support.jvm_cases import JvmCases

KAFKA_CASES = paths.REPO_ROOT / "tests" / "support" / "StandardAuthorizerCases.java"
TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]+")  # the characters of a topic's name (Kafka's Topic.validate)


class StandardAuthorizer(JvmCases):
    """Kafka's StandardAuthorizer in one JVM (tests/support/StandardAuthorizerCases.java): ``decide`` hands it one
    authorizer's configuration, ACLs and actions, and returns its decisions, allowed or not, in order."""

    def __init__(self, log_path):
        what = "Kafka's StandardAuthorizer"
        super().__init__(KAFKA_CASES, paths.kafka_classpath(), log_path, what, {"ALLOWED", "DENIED"})

    def decide(
        self, acls: Iterable[Acl], asks: list[dict], *, allow_if_no_acl=False, super_users: Iterable[str] = ()
    ) -> list[bool]:
        lines: list[tuple[str, ...]] = [("authorizer", str(allow_if_no_acl).lower(), ";".join(super_users))]
        lines += [  # a cluster holds each binding once (its controller makes a second creation a no-op)
            ("acl", a.resource_type, a.pattern_type, a.resource_name, a.principal, a.host, a.operation, a.permission)
            for a in dict.fromkeys(acls)
        ]
        lines += [("ask", q["principal"], q["host"], q["operation"], q["resource_type"], q["name"]) for q in asks]
        return [answer == "ALLOWED" for answer in self.ask(lines, len(asks))]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory):
    """Kafka's own authorizer, one JVM for the module (about 2 s to start)."""
    judge = StandardAuthorizer(tmp_path_factory.mktemp("standard-authorizer") / "stderr.log")
    yield judge
    judge.close()


def acl(
    operation="READ",
    name="orders",
    pattern="LITERAL",
    permission="ALLOW",
    principal="User:mirror",
    host="*",
    resource_type="TOPIC",
) -> Acl:
    return Acl(
        principal=principal,
        host=host,
        operation=operation,
        permission=permission,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


def allowed(kafka, acls, operation="READ", name="orders", resource_type="TOPIC", host="10.0.0.5", **kw) -> bool:
    """``authorize``'s answer, which ``authorize_all`` and Kafka's StandardAuthorizer (``kafka``) must give."""
    asked = {"principal": "User:mirror", "operation": operation, "resource_type": resource_type, "host": host}
    decision = authorize(acls, name=name, **asked, **kw)
    assert authorize_all(acls, names=[name], **asked, **kw) == {name: decision}
    assert kafka.decide(acls, [{**asked, "name": name}], **kw) == [decision.allowed], "Kafka decides otherwise"
    return decision.allowed


@pytest.mark.jvm
def test_no_acl_denies_unless_allow_everyone_if_no_acl_found(kafka):
    assert not allowed(kafka, [])
    assert allowed(kafka, [], allow_if_no_acl=True)
    # any ACL naming the resource (even for someone else) turns the default off
    assert not allowed(kafka, [acl(principal="User:other")], allow_if_no_acl=True)


@pytest.mark.parametrize(
    "pattern, name, topic, expected",
    [
        ("LITERAL", "orders", "orders", True),
        ("LITERAL", "orders", "orders2", False),
        ("LITERAL", "*", "anything", True),
        ("PREFIXED", "ord", "orders", True),
        ("PREFIXED", "orders.", "orders", False),
        ("PREFIXED", "*", "orders", False),  # '*' is only a wildcard for LITERAL
    ],
)
@pytest.mark.jvm
def test_resource_patterns(pattern, name, topic, expected, kafka):
    assert allowed(kafka, [acl(name=name, pattern=pattern)], name=topic) is expected


@pytest.mark.jvm
def test_deny_wins_over_any_allow_and_names_the_rule(kafka):
    deny = acl(permission="DENY", name="orders.eu", pattern="LITERAL")
    decision = authorize(
        [acl(name="orders", pattern="PREFIXED"), deny],
        principal="User:mirror",
        operation="READ",
        resource_type="TOPIC",
        name="orders.eu",
    )
    assert not decision.allowed and decision.rule == deny
    assert decision.reason == "denied by DENY READ on TOPIC LITERAL 'orders.eu' for User:mirror"
    assert allowed(kafka, [acl(name="orders", pattern="PREFIXED"), deny], name="orders.us")


@pytest.mark.jvm
def test_wildcard_principal_and_other_principals(kafka):
    assert allowed(kafka, [acl(principal="User:*")])
    assert not allowed(kafka, [acl(principal="User:mirror2")])
    assert not allowed(kafka, [acl(principal="Group:*")])
    assert not allowed(kafka, [acl(), acl(permission="DENY", principal="User:*")])


@pytest.mark.parametrize("granted", ["READ", "WRITE", "DELETE", "ALTER", "DESCRIBE", "ALL"])
@pytest.mark.jvm
def test_operations_that_imply_describe(granted, kafka):
    assert allowed(kafka, [acl(operation=granted)], operation="DESCRIBE")


@pytest.mark.parametrize("granted", ["CREATE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"])
@pytest.mark.jvm
def test_operations_that_do_not_imply_describe(granted, kafka):
    assert not allowed(kafka, [acl(operation=granted)], operation="DESCRIBE")


@pytest.mark.jvm
def test_alter_configs_implies_describe_configs_and_nothing_implies_read(kafka):
    assert allowed(kafka, [acl(operation="ALTER_CONFIGS")], operation="DESCRIBE_CONFIGS")
    assert not allowed(kafka, [acl(operation="DESCRIBE")], operation="READ")
    assert not allowed(kafka, [acl(operation="WRITE")], operation="READ")


@pytest.mark.jvm
def test_deny_implies_nothing_but_deny_all_blocks_everything(kafka):
    # DENY READ does not deny DESCRIBE, which the ALLOW READ still implies
    assert allowed(kafka, [acl(), acl(permission="DENY")], operation="DESCRIBE")
    assert not allowed(kafka, [acl(), acl(operation="ALL", permission="DENY")], operation="DESCRIBE")
    assert not allowed(
        kafka, [acl(operation="ALL"), acl(operation="DESCRIBE", permission="DENY")], operation="DESCRIBE"
    )


@pytest.mark.jvm
def test_host_matching(kafka):
    assert allowed(kafka, [acl(host="10.0.0.5")])
    assert not allowed(kafka, [acl(host="10.0.0.6")])
    assert not allowed(kafka, [acl(), acl(permission="DENY", host="10.0.0.5")])
    assert allowed(kafka, [acl(), acl(permission="DENY", host="10.0.0.6")])


@pytest.mark.jvm
def test_resource_types_do_not_mix_and_super_users_bypass(kafka):
    assert not allowed(kafka, [acl(resource_type="GROUP")])
    assert allowed(
        kafka, [acl(resource_type="GROUP", name="spark", pattern="PREFIXED")], resource_type="GROUP", name="spark-1"
    )
    assert allowed(kafka, [acl(permission="DENY")], super_users=["User:mirror"])


# ---- many resources at once: authorize_all against authorize ------------------------------------------------------
PRINCIPALS = ["User:mirror", "User:*", "User:other", "Group:*"]
OPERATIONS = ["READ", "WRITE", "DESCRIBE", "CREATE", "ALL", "ALTER", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"]


def _names(rng: random.Random, count: int) -> list[str]:
    stems = ["orders", "orders.eu", "pay", "payments", "o", "*", "logs.app", "x"]
    return [
        f"{rng.choice(stems)}{rng.choice(['', '.', '-'])}{rng.randrange(40) if rng.random() < 0.7 else ''}"
        for _ in range(count)
    ]


def _acls(rng: random.Random, count: int, names: list[str]) -> list[Acl]:
    acls = []
    for _ in range(count):
        name = rng.choice(names)
        pattern = rng.choice(["LITERAL", "LITERAL", "PREFIXED"])
        if pattern == "PREFIXED":
            name = name[: rng.randrange(len(name) + 1)]
        elif rng.random() < 0.05:
            name = "*"
        acls.append(_drawn(rng, name, pattern, 0.15, ["TOPIC", "TOPIC", "GROUP"]))
    return acls


def _drawn(rng: random.Random, name: str, pattern: str, deny: float, resource_types: list[str]) -> Acl:
    """An ACL on ``name`` (``pattern``) with a drawn operation, principal and host, DENY with probability ``deny``."""
    return acl(
        operation=rng.choice(OPERATIONS),
        name=name,
        pattern=pattern,
        permission="DENY" if rng.random() < deny else "ALLOW",
        principal=rng.choice(PRINCIPALS),
        host=rng.choice(["*", "*", "10.0.0.5", "10.0.0.6"]),
        resource_type=rng.choice(resource_types),
    )


@pytest.mark.jvm
@pytest.mark.parametrize("round_", range(4))
def test_authorize_all_and_kafka_decide_as_authorize_on_generated_acls(round_, kafka):
    """Per round, 300 drawn ACLs and 400 drawn names, four operations, with and without
    allow.everyone.if.no.acl.found: 3,200 decisions by ``authorize`` and by ``authorize_all``, and Kafka's
    StandardAuthorizer's for every name a topic can have (Kafka's characters: the ``*...`` names stay ACL patterns;
    Kafka 4.2 applies no LITERAL ``*`` ACL to a resource named ``*`` and more, which no topic can be)."""
    seed = seeds.draw_seed(f"authorize_all and Kafka against authorize, round {round_}")
    print(f"seed {seed} (repeat with {seeds.ENV}={seed})")
    rng = random.Random(seed * 8 + round_)  # rounds differ when a seed is repeated
    names = _names(rng, 400)
    acls = _acls(rng, 300, names)
    for allow_if_no_acl in (False, True):
        asks, ours = [], []
        for operation in ("READ", "DESCRIBE", "WRITE", "DESCRIBE_CONFIGS"):
            asked = {"principal": "User:mirror", "operation": operation, "resource_type": "TOPIC", "host": "10.0.0.5"}
            expected = {n: authorize(acls, name=n, allow_if_no_acl=allow_if_no_acl, **asked) for n in names}
            assert authorize_all(acls, names=names, allow_if_no_acl=allow_if_no_acl, **asked) == expected, seed
            asks += [{**asked, "name": n} for n in names if TOPIC_NAME.fullmatch(n)]
            ours += [expected[n].allowed for n in names if TOPIC_NAME.fullmatch(n)]
        theirs = kafka.decide(acls, asks, allow_if_no_acl=allow_if_no_acl)
        differ = [
            f"{q['operation']} {q['name']!r}: ours {o}, Kafka's {t}" for q, o, t in zip(asks, ours, theirs) if o != t
        ]
        assert not differ, f"seed {seed}, allow_if_no_acl={allow_if_no_acl}: {len(differ)} differ: {differ[:5]}"


ASKED_OPERATIONS = ["READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"]
SCENARIO_NAMES = ["orders", "orders.eu", "orders.us", "pay", "payments"]


def _scenario(rng: random.Random) -> tuple[list[Acl], dict]:
    """A few ACLs over a few names, so that each rule decides some case (among hundreds of ACLs, a PREFIXED grant on
    a short prefix or a ``*`` decides most of them), and the broker's settings."""
    acls = []
    for _ in range(rng.randint(0, 6)):
        pattern, name = rng.choice(["LITERAL", "LITERAL", "PREFIXED"]), rng.choice(SCENARIO_NAMES)
        if pattern == "PREFIXED":
            name = name[: rng.randint(1, len(name))]  # Kafka refuses an empty prefix
        elif rng.random() < 0.1:
            name = "*"
        acls.append(_drawn(rng, name, pattern, 0.25, ["TOPIC", "GROUP"]))
    settings = {"allow_if_no_acl": rng.random() < 0.3, "super_users": ["User:mirror"] if rng.random() < 0.05 else []}
    return acls, settings


@pytest.mark.jvm
def test_kafka_decides_as_authorize_on_small_generated_scenarios(kafka):
    """400 drawn scenarios of at most six ACLs, each asked every operation on every name of both resource types, by
    ``User:mirror`` or ``User:other`` from 10.0.0.5: 32,000 decisions by ``authorize``, ``authorize_all`` and Kafka."""
    seed = seeds.draw_seed("Kafka against authorize, small scenarios")
    print(f"seed {seed} (repeat with {seeds.ENV}={seed})")
    rng = random.Random(seed)
    differ = []
    for scenario in range(400):
        acls, settings = _scenario(rng)
        principal = rng.choice(["User:mirror", "User:mirror", "User:other"])
        asks, ours = [], []
        for resource_type in ("TOPIC", "GROUP"):
            for operation in ASKED_OPERATIONS:
                asked = {"principal": principal, "operation": operation, "resource_type": resource_type}
                asked["host"] = "10.0.0.5"
                decisions = authorize_all(acls, names=SCENARIO_NAMES, **asked, **settings)
                assert decisions == {n: authorize(acls, name=n, **asked, **settings) for n in SCENARIO_NAMES}, seed
                asks += [{**asked, "name": n} for n in SCENARIO_NAMES]
                ours += [decisions[n].allowed for n in SCENARIO_NAMES]
        theirs = kafka.decide(acls, asks, **settings)
        differ += [(scenario, q, o, acls, settings) for q, o, t in zip(asks, ours, theirs) if o != t]
    if differ:
        scenario, ask, ours, acls, settings = differ[0]
        first = f"scenario {scenario}: {ask} with {settings} and {acls}: ours {ours}, Kafka's {not ours}"
        raise AssertionError(f"seed {seed}: {len(differ)} decisions differ from Kafka's; the first: {first}")


def test_authorize_all_follows_resources_plus_acls_not_their_product():
    """10,000 topics against 10,000 ACLs (a LITERAL grant per topic, as some clusters hold them, and a few PREFIXED
    ones and DENYs): decided in a pass over each, where the rules read per topic would make 10^8 comparisons."""
    seed = seeds.draw_seed("authorize_all over 10,000 topics")
    print(f"seed {seed} (repeat with {seeds.ENV}={seed})")
    rng = random.Random(seed)
    topics = [f"orders.t{i:05d}" for i in range(10_000)]
    acls = [acl(name=t) for t in topics]
    denied = set(rng.sample(topics, 25))
    acls += [acl(name=t, permission="DENY", principal="User:*") for t in sorted(denied)]
    acls += [acl(name="orders.", pattern="PREFIXED", principal="User:other"), acl(name="logs", pattern="PREFIXED")]
    started = time.process_time()
    decisions = authorize_all(acls, principal="User:mirror", operation="READ", resource_type="TOPIC", names=topics)
    spent = time.process_time() - started
    assert {t for t, d in decisions.items() if not d.allowed} == denied
    assert all(d.rule == acl(name=t) for t, d in decisions.items() if t not in denied)
    sample = rng.sample(topics, 50)
    for topic in sample:  # the one-resource rules agree on a sample (all of them would take minutes)
        assert decisions[topic] == authorize(
            acls, principal="User:mirror", operation="READ", resource_type="TOPIC", name=topic
        ), seed
    assert spent < 5, f"{spent:.1f} s of CPU for 10,000 topics"


def test_patterns_find_the_acls_naming_a_resource_in_their_order():
    first, star, prefix, empty, other = (
        acl(name="orders.eu"),
        acl(name="*"),
        acl(name="orders", pattern="PREFIXED"),
        acl(name="", pattern="PREFIXED"),
        acl(name="orders.e", pattern="LITERAL"),
    )
    patterns = Patterns(enumerate([prefix, first, other, star, empty]))
    assert patterns.covering("orders.eu") == [prefix, first, star, empty]
    assert patterns.covering("ord") == [star, empty]
    assert patterns.covering("*") == [star, empty]
