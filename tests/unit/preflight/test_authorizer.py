"""Kafka's StandardAuthorizer rules, reproduced by secure_mirror.preflight.authorizer (pure, no broker): every case
is decided by ``authorize`` (the rules read over every ACL) and by ``authorize_all`` (many resources at once, by
pattern), which must agree, on these cases and on large generated ones."""

from __future__ import annotations

import random
import time

import pytest

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.authorizer import Patterns, authorize, authorize_all
from tests.support import seeds


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


def allowed(acls, operation="READ", name="orders", resource_type="TOPIC", host="10.0.0.5", **kw) -> bool:
    asked = {"principal": "User:mirror", "operation": operation, "resource_type": resource_type, "host": host, **kw}
    decision = authorize(acls, name=name, **asked)
    assert authorize_all(acls, names=[name], **asked) == {name: decision}
    return decision.allowed


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found():
    assert not allowed([])
    assert allowed([], allow_if_no_acl=True)
    # any ACL naming the resource (even for someone else) turns the default off
    assert not allowed([acl(principal="User:other")], allow_if_no_acl=True)


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
def test_resource_patterns(pattern, name, topic, expected):
    assert allowed([acl(name=name, pattern=pattern)], name=topic) is expected


def test_deny_wins_over_any_allow_and_names_the_rule():
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
    assert allowed([acl(name="orders", pattern="PREFIXED"), deny], name="orders.us")


def test_wildcard_principal_and_other_principals():
    assert allowed([acl(principal="User:*")])
    assert not allowed([acl(principal="User:mirror2")])
    assert not allowed([acl(principal="Group:*")])
    assert not allowed([acl(), acl(permission="DENY", principal="User:*")])


@pytest.mark.parametrize("granted", ["READ", "WRITE", "DELETE", "ALTER", "DESCRIBE", "ALL"])
def test_operations_that_imply_describe(granted):
    assert allowed([acl(operation=granted)], operation="DESCRIBE")


@pytest.mark.parametrize("granted", ["CREATE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"])
def test_operations_that_do_not_imply_describe(granted):
    assert not allowed([acl(operation=granted)], operation="DESCRIBE")


def test_alter_configs_implies_describe_configs_and_nothing_implies_read():
    assert allowed([acl(operation="ALTER_CONFIGS")], operation="DESCRIBE_CONFIGS")
    assert not allowed([acl(operation="DESCRIBE")], operation="READ")
    assert not allowed([acl(operation="WRITE")], operation="READ")


def test_deny_implies_nothing_but_deny_all_blocks_everything():
    # DENY READ does not deny DESCRIBE, which the ALLOW READ still implies
    assert allowed([acl(), acl(permission="DENY")], operation="DESCRIBE")
    assert not allowed([acl(), acl(operation="ALL", permission="DENY")], operation="DESCRIBE")
    assert not allowed([acl(operation="ALL"), acl(operation="DESCRIBE", permission="DENY")], operation="DESCRIBE")


def test_host_matching():
    assert allowed([acl(host="10.0.0.5")])
    assert not allowed([acl(host="10.0.0.6")])
    assert not allowed([acl(), acl(permission="DENY", host="10.0.0.5")])
    assert allowed([acl(), acl(permission="DENY", host="10.0.0.6")])


def test_resource_types_do_not_mix_and_super_users_bypass():
    assert not allowed([acl(resource_type="GROUP")])
    assert allowed(
        [acl(resource_type="GROUP", name="spark", pattern="PREFIXED")], resource_type="GROUP", name="spark-1"
    )
    assert allowed([acl(permission="DENY")], super_users=["User:mirror"])


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
        acls.append(
            acl(
                operation=rng.choice(OPERATIONS),
                name=name,
                pattern=pattern,
                permission="DENY" if rng.random() < 0.15 else "ALLOW",
                principal=rng.choice(PRINCIPALS),
                host=rng.choice(["*", "*", "10.0.0.5", "10.0.0.6"]),
                resource_type=rng.choice(["TOPIC", "TOPIC", "GROUP"]),
            )
        )
    return acls


@pytest.mark.parametrize("round_", range(4))
def test_authorize_all_decides_as_authorize_on_generated_acls(round_):
    seed = seeds.draw_seed(f"authorize_all against authorize, round {round_}")
    print(f"seed {seed} (repeat with {seeds.ENV}={seed})")
    rng = random.Random(seed * 8 + round_)  # rounds differ when a seed is repeated
    names = _names(rng, 400)
    acls = _acls(rng, 300, names)
    for operation in ("READ", "DESCRIBE", "WRITE", "DESCRIBE_CONFIGS"):
        for allow_if_no_acl in (False, True):
            asked = {"principal": "User:mirror", "operation": operation, "resource_type": "TOPIC", "host": "10.0.0.5"}
            expected = {n: authorize(acls, name=n, allow_if_no_acl=allow_if_no_acl, **asked) for n in names}
            assert authorize_all(acls, names=names, allow_if_no_acl=allow_if_no_acl, **asked) == expected, seed


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
