"""The cut-over's fence and promotion plans (issue 41, secure_mirror/cutover/plans.py) as pure decisions: examples per
rule, then generated source ACLs (seeded) against what must always hold: no producer's grant on a selected topic left
unfenced or unnamed, nothing of another topic or another operation touched, the way back exactly the fence reversed,
promotion only LITERAL WRITE/DESCRIBE on target names of selected topics, never User:* or a reserved topic."""

from __future__ import annotations

import pytest

from secure_mirror.cutover import plans
from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import load_profile
from tests.support import profiles as pf
from tests.support.seeds import seeded
from tests.unit.render.test_consumer_acls import acl as consumer_binding

SOURCE_TOPICS = ["orders.eu", "orders.us", "orders.x.tmp", "payments", "secret", "ordersX"]


def acl(principal, operation, name, pattern="LITERAL", resource_type="TOPIC", **kw) -> Acl:
    """A binding, topics first (the consumers' plan's tests name the resource type first)."""
    return consumer_binding(principal, operation, resource_type, name, pattern, **kw)


def deny(principal, topic) -> Acl:
    return Acl(principal=principal, operation="WRITE", permission="DENY", resource_type="TOPIC", resource_name=topic)


@pytest.fixture
def profile(tmp_path):
    return pf.load(tmp_path)  # include orders.*,payments; exclude .*\.tmp; rename alias_prefix (src.<topic>)


def selected(profile):
    return profile.selection().select(SOURCE_TOPICS)


def test_a_literal_write_is_removed_and_others_get_a_deny_per_selected_topic(profile):
    literal = acl("User:app", "WRITE", "payments", host="10.0.0.7")
    prefix = acl("User:etl", "WRITE", "orders.", "PREFIXED")
    everything = acl("User:ops", "ALL", "*")
    plan = plans.fence_plan(
        profile, [literal, prefix, everything, acl("User:app", "WRITE", "secret")], selected(profile)
    )
    assert plan.remove == [literal]
    assert plan.deny == [
        deny("User:etl", "orders.eu"),
        deny("User:etl", "orders.us"),
        deny("User:ops", "orders.eu"),
        deny("User:ops", "orders.us"),
        deny("User:ops", "ordersX"),  # orders.* is a regex: it selects ordersX too
        deny("User:ops", "payments"),
    ]
    assert plan.producers == {
        "User:app": ["payments"],
        "User:etl": ["orders.eu", "orders.us"],
        "User:ops": ["orders.eu", "orders.us", "ordersX", "payments"],
    }
    assert plan.unfenceable == [] and plan.changes


def test_reading_the_mirror_and_other_topics_are_left_alone(profile):
    plan = plans.fence_plan(
        profile,
        [
            acl("User:reader", "READ", "payments"),
            acl("User:mirror", "ALL", "*"),  # the mirror's own source identity
            acl("User:app", "WRITE", "secret"),
            acl("User:app", "WRITE", "pay", "PREFIXED", resource_type="GROUP"),
            acl("User:app", "WRITE", "payments", permission="DENY"),
        ],
        selected(profile),
    )
    assert not plan.changes and plan.producers == {} and plan.unfenceable == []


def test_grants_a_principal_cannot_fence_are_named(profile):
    wildcard = acl("User:*", "WRITE", "payments")
    group = acl("Group:writers", "ALL", "orders.", "PREFIXED")
    odd = acl("User:bad\tname", "WRITE", "payments")
    plan = plans.fence_plan(profile, [wildcard, group, odd], selected(profile))
    assert [(u.binding, u.topics) for u in plan.unfenceable] == [
        (wildcard, ("payments",)),
        (group, ("orders.eu", "orders.us")),
        (odd, ("payments",)),
    ]
    assert "User:*" in plan.unfenceable[0].reason and "not a User principal" in plan.unfenceable[1].reason
    assert "a tab" in plan.unfenceable[2].reason and not plan.changes


def test_a_rerun_lists_the_denies_held_already_and_the_way_back_reverses_the_record(profile):
    grant = acl("User:etl", "WRITE", "orders.", "PREFIXED")
    literal = acl("User:app", "WRITE", "payments")
    first = plans.fence_plan(profile, [grant, literal], selected(profile))
    again = plans.fence_plan(profile, [grant, deny("User:etl", "orders.eu")], selected(profile))
    assert again.present == [deny("User:etl", "orders.eu")] and again.deny == [deny("User:etl", "orders.us")]
    assert plans.restore(first) == ([literal], [deny("User:etl", "orders.eu"), deny("User:etl", "orders.us")])


def test_promotion_grants_literal_target_names_to_the_mapped_producers(tmp_path):
    data = pf.cross_realm(pf.profile_data(tmp_path))
    data["target"]["principal_mapping"] = {
        "principal_to_local_rules": ["RULE:[1:$1@$0](.*@SOURCE\\.TEST)s/@.*/-dr/", "DEFAULT"]
    }
    profile = load_profile(pf.write_profile(tmp_path, data))
    fenced = plans.fence_plan(
        profile,
        [acl("User:app", "WRITE", "payments"), acl("User:etl", "ALL", "orders.eu")],
        profile.selection().select(SOURCE_TOPICS),
    )
    held = Acl(principal="User:app-dr", operation="WRITE", resource_type="TOPIC", resource_name="src.payments")
    plan = plans.promote_plan(profile, fenced, [held])
    assert plan.principals["User:app"][0] == "User:app-dr" and plan.principals["User:etl"][0] == "User:etl-dr"
    assert plan.present == [held]
    assert [(a.principal, a.operation, a.resource_name, a.pattern_type) for a in plan.grant] == [
        ("User:app-dr", "DESCRIBE", "src.payments", "LITERAL"),
        ("User:etl-dr", "WRITE", "src.orders.eu", "LITERAL"),
        ("User:etl-dr", "DESCRIBE", "src.orders.eu", "LITERAL"),
    ]


# ---- generated inputs -------------------------------------------------------------------------------------------------
PRINCIPALS = ["User:app", "User:etl", "User:*", "User:mirror", "Group:ops", "User:carol", "User:x\ny"]
OPERATIONS = ["WRITE", "WRITE", "ALL", "READ", "DESCRIBE", "CREATE", "ALTER"]
NAMES = [*SOURCE_TOPICS, "*", "orders", "orders.", "o", "pay", "payments", "secret"]


def _random_acl(rng) -> Acl:
    return acl(
        rng.choice(PRINCIPALS),
        rng.choice(OPERATIONS),
        rng.choice(NAMES),
        rng.choice(["LITERAL", "PREFIXED"]),
        resource_type=rng.choice(["TOPIC", "TOPIC", "TOPIC", "GROUP", "TRANSACTIONAL_ID"]),
        permission=rng.choice(["ALLOW", "ALLOW", "DENY"]),
        host=rng.choice(["*", "10.1.2.3"]),
    )


def _may_write(acls: list[Acl], principal: str, topic: str) -> bool:
    """Kafka's authorizer on WRITE (super users aside): a DENY wins; else an ALLOW of WRITE or ALL from any host."""
    matching = [
        a
        for a in acls
        if a.principal in (principal, "User:*") and a.covers("TOPIC", topic) and a.operation in ("WRITE", "ALL")
    ]
    return not any(a.permission == "DENY" for a in matching) and any(a.permission == "ALLOW" for a in matching)


def test_generated_source_acls_are_fenced_or_named(profile):
    rng = seeded("cutover fence")
    topics = selected(profile)
    for _ in range(400):
        source = [_random_acl(rng) for _ in range(rng.randrange(1, 10))]
        plan = plans.fence_plan(profile, source, topics)
        after = [a for a in source if a not in plan.remove] + plan.deny
        named = {u.binding.principal for u in plan.unfenceable}
        for principal in {a.principal for a in source} - {"User:mirror"}:
            for topic in topics:
                if _may_write(after, principal, topic):
                    assert principal in named or "User:*" in named or not principal.startswith("User:"), (
                        principal,
                        topic,
                        source,
                    )
        for other in set(SOURCE_TOPICS) - set(topics):  # nothing of an unselected topic changes
            for principal in {a.principal for a in source}:
                assert _may_write(after, principal, other) == _may_write(source, principal, other)
        assert all(a.operation == "WRITE" and a.resource_type == "TOPIC" for a in plan.remove + plan.deny)
        assert all(a.permission == "DENY" and a.pattern_type == "LITERAL" and a.host == "*" for a in plan.deny)
        assert all(a.resource_name in topics for a in plan.remove + plan.deny)
        adds, deletes = plans.restore(plan)
        assert set(after) - set(deletes) | set(adds) == set(source) | set(plan.present)
        promoted = plans.promote_plan(profile, plan, None)
        for grant in promoted.grant:
            assert grant.principal != "User:*" and grant.pattern_type == "LITERAL" and grant.permission == "ALLOW"
            assert grant.operation in ("WRITE", "DESCRIBE")
            assert grant.resource_name in {profile.target_topic(t) for t in topics}


def test_promotion_never_grants_a_reserved_target_name(tmp_path):
    """A backstop: validate refuses selecting a reserved topic, and promotion refuses granting one all the same."""
    profile = pf.load(tmp_path, rename={"rule": "identity"})
    fenced = plans.FencePlan(producers={"User:app": ["payments", "_schemas", "__consumer_offsets"]})
    plan = plans.promote_plan(profile, fenced, None)
    assert {a.resource_name for a in plan.grant} == {"payments"}
    assert [name for name, _ in plan.skipped] == ["_schemas", "__consumer_offsets"]
    assert all("reserved" in why for _, why in plan.skipped)
