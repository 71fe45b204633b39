"""The consumer access plan (issue 29 part 3, render/consumer_acls.py) as pure decisions: from source bindings and
topic names to the target bindings a consumer needs after failover. Examples per rule, then generated source ACLs
(seeded) against the rules that must always hold: WRITE never copied, ALL narrowed, no wildcard principal, every
resource a target name of a selected topic or a group, host and permission kept; and the script's encoding."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import topics
from secure_mirror.render import consumer_acls as ca
from tests.support import profiles as pf
from tests.support.seeds import seeded

SOURCE_TOPICS = ["orders.eu", "orders.us", "orders.x.tmp", "payments", "secret", "ordersX"]


def acl(principal: str, operation: str, resource_type: str, name: str, pattern: str = "LITERAL", **kw) -> Acl:
    return Acl(
        principal=principal,
        operation=operation,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
        **kw,
    )


@pytest.fixture
def profile(tmp_path):
    return pf.load(tmp_path)  # include orders.*,payments; exclude .*\.tmp; rename alias_prefix (src.<topic>)


def plan_of(profile, *bindings: Acl, target=None):
    return ca.consumer_plan(profile, list(bindings), SOURCE_TOPICS, target)


def test_read_becomes_read_and_describe_on_the_target_name(profile):
    plan = plan_of(profile, acl("User:alice", "READ", "TOPIC", "payments", host="10.0.0.1"))
    assert plan.bindings == [
        acl("User:alice", op, "TOPIC", "src.payments", host="10.0.0.1") for op in ("READ", "DESCRIBE")
    ]
    assert plan.principals == {"User:alice": ("User:alice", "the same name")}


def test_write_is_never_copied_and_all_is_narrowed(profile):
    plan = plan_of(
        profile, acl("User:alice", "WRITE", "TOPIC", "payments"), acl("User:bob", "ALL", "TOPIC", "payments")
    )
    assert plan.bindings == [acl("User:bob", op, "TOPIC", "src.payments") for op in ("READ", "DESCRIBE")]
    assert set(plan.principals) == {"User:bob"}  # alice gets nothing on the target
    assert [(s.binding.principal, s.reason) for s in plan.skipped] == [
        ("User:alice", "WRITE is never copied: a consumer reads")
    ]


def test_the_wildcard_principal_and_the_mirror_are_reported_not_copied(profile):
    plan = plan_of(
        profile,
        acl("User:*", "READ", "TOPIC", "payments"),
        acl("User:mirror", "READ", "TOPIC", "payments"),
        acl("Group:ops", "READ", "TOPIC", "payments"),
    )
    assert plan.bindings == []
    assert [s.reason for s in plan.skipped] == [
        "the wildcard principal User:* is never copied: grant the consumers by name",
        "the mirror's own identity, not a consumer (render's apply-acls.sh grants it)",
        "not a User principal: no rule maps it to the target",
    ]


def test_deny_is_copied_as_deny_for_the_consumer_operations(profile):
    plan = plan_of(profile, acl("User:eve", "ALL", "TOPIC", "payments", permission="DENY"))
    assert plan.bindings == [
        acl("User:eve", op, "TOPIC", "src.payments", permission="DENY") for op in ("READ", "DESCRIBE")
    ]


def test_topics_outside_the_selection_are_not_read(profile):
    plan = plan_of(
        profile, acl("User:alice", "READ", "TOPIC", "secret"), acl("User:a", "READ", "TOPIC", "x", "PREFIXED")
    )
    assert plan.bindings == plan.skipped == []


def test_a_prefix_or_wildcard_becomes_literal_names_while_an_exclude_holds(profile):
    plan = plan_of(profile, acl("User:alice", "READ", "TOPIC", "orders", "PREFIXED"))
    assert {(b.resource_name, b.pattern_type) for b in plan.bindings} == {
        ("src.orders.eu", "LITERAL"),
        ("src.orders.us", "LITERAL"),
        ("src.ordersX", "LITERAL"),
    }  # orders.x.tmp: excluded
    star = plan_of(profile, acl("User:alice", "READ", "TOPIC", "*"))
    assert {b.resource_name for b in star.bindings} == {"src.orders.eu", "src.orders.us", "src.ordersX", "src.payments"}


def test_a_prefix_carries_to_the_target_prefix_when_the_rename_allows(tmp_path):
    profile = pf.load(tmp_path, topics={"include": "orders.*"})
    plan = plan_of(profile, acl("User:alice", "READ", "TOPIC", "orders.", "PREFIXED"))
    assert {(b.resource_name, b.pattern_type) for b in plan.bindings} == {("src.orders.", "PREFIXED")}
    suffixed = pf.load(
        tmp_path / "t", topics={"include": "orders.*"}, rename={"rule": "template", "template": "{topic}.bak"}
    )
    names = {(b.resource_name, b.pattern_type) for b in plan_of(suffixed, plan.origins[plan.bindings[0]][0]).bindings}
    assert names == {(f"{topic}.bak", "LITERAL") for topic in ("orders.eu", "orders.us", "orders.x.tmp")}


def test_the_groups_of_readers_are_copied_as_on_the_source(profile):
    plan = plan_of(
        profile,
        acl("User:alice", "READ", "TOPIC", "payments"),
        acl("User:alice", "READ", "GROUP", "billing-", "PREFIXED"),
        acl("User:alice", "DELETE", "GROUP", "billing-app"),
        acl("User:bob", "READ", "GROUP", "bob-app"),  # bob reads no selected topic
        acl("User:carol", "WRITE", "TOPIC", "payments"),
        acl("User:carol", "READ", "GROUP", "carol-app"),  # carol only writes
    )
    groups = [b for b in plan.bindings if b.resource_type == "GROUP"]
    assert groups == [acl("User:alice", "READ", "GROUP", "billing-", "PREFIXED")]
    assert "DELETE is not a consumer's operation" in plan.skipped[-1].reason


def test_with_mirror_groups_only_the_synced_groups_and_narrowed(tmp_path):
    profile = pf.load(tmp_path, groups={"include": "billing-app,billing-team-.*,other"})
    plan = plan_of(
        profile,
        acl("User:alice", "READ", "TOPIC", "payments"),
        acl("User:alice", "READ", "GROUP", "billing-", "PREFIXED"),
        acl("User:alice", "READ", "GROUP", "elsewhere"),
    )
    assert {(b.resource_name, b.pattern_type) for b in plan.bindings if b.resource_type == "GROUP"} == {
        ("billing-app", "LITERAL"),
        ("billing-team-", "PREFIXED"),
    }
    assert plan.skipped[-1].reason == "names no group that mirror.groups syncs"


def test_principals_map_by_the_targets_rules_else_keep_their_name(tmp_path):
    data = pf.profile_data(tmp_path)
    data["target"]["principal_mapping"] = {
        "principal_to_local_rules": ["RULE:[1:$1@$0](alice@SOURCE\\.TEST)s/@.*/-src/", "DEFAULT"]
    }
    from secure_mirror.profile import load_profile

    profile = load_profile(pf.write_profile(tmp_path, data))
    plan = plan_of(
        profile, acl("User:alice", "READ", "TOPIC", "payments"), acl("User:bob", "READ", "TOPIC", "payments")
    )
    assert plan.principals == {
        "User:alice": ("User:alice-src", "alice@SOURCE.TEST by target.principal_mapping.principal_to_local_rules"),
        "User:bob": ("User:bob", "the same name"),
    }
    assert {b.principal for b in plan.bindings} == {"User:alice-src", "User:bob"}


def test_the_diff_against_the_target(profile):
    held = acl("User:alice", "READ", "TOPIC", "src.payments")
    plan = plan_of(profile, acl("User:alice", "READ", "TOPIC", "payments"), target=[held])
    assert plan.present == [held]
    assert plan.to_add == [acl("User:alice", "DESCRIBE", "TOPIC", "src.payments")]
    assert plan.to_dict()["bindings"][0]["present"] is True
    shape = ca.ConsumerAclsOutput.model_validate_json(plan.to_json())  # the JSON has the documented shape
    assert shape.bindings[0].origins == [ca.AclOut(**acl("User:alice", "READ", "TOPIC", "payments").to_dict())]


def test_the_script_encodes_every_value_and_lists_only_what_to_add(profile, tmp_path):
    hostile = "app';touch /tmp/pwned;'$(id)`x`"
    held = acl("User:alice", "READ", "TOPIC", "src.payments")
    plan = plan_of(
        profile,
        acl("User:alice", "READ", "TOPIC", "payments"),
        acl("User:alice", "READ", "GROUP", hostile),
        acl("User:*", "READ", "TOPIC", "payments"),
        target=[held],
    )
    script = ca.consumer_acls_script(plan, profile)
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    commands = [shlex.split(line, comments=True) for line in script.replace("\\\n", "").splitlines()]
    adds = [words for words in commands if words and words[0] == "$KAFKA_ACLS"]
    assert len(adds) == 2  # DESCRIBE on the topic and READ on the group; READ on the topic is present
    group = next(words for words in adds if "--group" in words)
    assert group[group.index("--group") + 1] == hostile
    assert "# present already: --allow-principal User:alice" in script
    assert "# not copied (the wildcard principal User:* is never copied" in script
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").write_text("kept\n")
    (tmp_path / "out" / "consumer-acls.sh").symlink_to(tmp_path / "elsewhere")  # replaced, never written through
    written = ca.write(plan, profile, tmp_path / "out")
    assert [(p.name, p.stat().st_mode & 0o777) for p in written] == [
        ("consumer-acls.sh", 0o700),
        ("consumer-acls.json", 0o600),
    ]
    assert written[0].read_text() == script and (tmp_path / "elsewhere").read_text() == "kept\n"


def test_one_odd_binding_is_named_and_skipped_and_the_rest_stands(profile, tmp_path):
    odd_group = acl("User:alice", "READ", "GROUP", "billing\tapp")
    odd_principal = acl("User:bob\nx", "READ", "TOPIC", "payments")
    plan = plan_of(
        profile,
        acl("User:alice", "READ", "TOPIC", "payments"),
        odd_group,
        acl("User:alice", "READ", "GROUP", "billing-app"),
        odd_principal,
    )
    assert [(item.binding, item.reason) for item in plan.skipped] == [
        (
            odd_principal,
            "not scriptable, grant it by hand: an ACL principal: the value contains a line feed (U+000A), "
            "which a shell script cannot represent",
        ),
        (
            odd_group,
            "not scriptable, grant it by hand: an ACL resource name: the value contains a tab (U+0009), "
            "which a shell script cannot represent",
        ),
    ]
    assert "User:bob\nx" not in plan.principals
    script = ca.consumer_acls_script(plan, profile)
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    adds = [shlex.split(line) for line in script.replace("\\\n", "").splitlines() if line.startswith('"$KAFKA_ACLS"')]
    named = sorted(
        (words[words.index(o) + 1], words[words.index("--operation") + 1])
        for words in adds
        for o in ("--topic", "--group")
        if o in words
    )
    assert named == [("billing-app", "Read"), ("src.payments", "Describe"), ("src.payments", "Read")]
    assert script.count("a GROUP binding; consumer-acls.json names it") == 1
    assert script.count("a TOPIC binding; consumer-acls.json names it") == 1
    skipped = json.loads(plan.to_json())["skipped"]
    assert {item["resource_name"] for item in skipped} == {"billing\tapp", "payments"}


def test_the_command_wants_its_plan_named(tmp_path, capsys):
    from secure_mirror.cli import main

    assert main(["acls", str(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))]) == 2
    assert "name the plan to make: --consumers" in capsys.readouterr().err


# ---- generated inputs -------------------------------------------------------------------------------------------------
PRINCIPALS = ["User:alice", "User:bob", "User:*", "User:mirror", "Group:ops", "User:carol", "User:dave\r"]
OPERATIONS = ["READ", "WRITE", "ALL", "DESCRIBE", "CREATE", "DELETE", "ALTER", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"]
NAMES = [
    *SOURCE_TOPICS,
    "*",
    "orders",
    "orders.",
    "o",
    "",
    "pay",
    "billing-app",
    "billing-",
    "billing\tapp",
    "team-\x1b[",
]


def _random_acl(rng) -> Acl:
    return acl(
        rng.choice(PRINCIPALS),
        rng.choice(OPERATIONS),
        rng.choice(["TOPIC", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID"]),
        rng.choice(NAMES),
        rng.choice(["LITERAL", "PREFIXED"]),
        permission=rng.choice(["ALLOW", "ALLOW", "DENY"]),
        host=rng.choice(["*", "10.1.2.3"]),
    )


def _is_target_of_selected(profile, name: str, pattern: str) -> bool:
    pieces = profile.target_topic_pieces
    if pattern == "LITERAL":
        source = name[len(pieces[0]) : len(name) - len(pieces[-1]) or None]
        return profile.target_topic(source) == name and profile.selection().matches(source)
    includes = [topics.classify(piece) for piece in profile.selection().include]
    return any(i.kind == "prefix" and name.startswith(profile.target_topic(i.value)) for i in includes)


@pytest.mark.parametrize("groups", [None, "billing-app,team-.*"])
def test_generated_source_acls_keep_the_rules(tmp_path, groups):
    rng = seeded(f"consumer acls, groups {groups}")
    profiles = [
        pf.load(tmp_path / "a", **({"groups": {"include": groups}} if groups else {})),
        pf.load(tmp_path / "b", topics={"include": "orders.*,payments"}),
    ]
    for round_ in range(300):
        profile = profiles[round_ % 2]
        source = [_random_acl(rng) for _ in range(rng.randrange(1, 12))]
        plan = ca.consumer_plan(profile, source, SOURCE_TOPICS, rng.sample(source, k=min(2, len(source))))
        for binding in plan.bindings:
            assert binding.operation in ("READ", "DESCRIBE"), binding
            assert binding.principal.startswith("User:") and binding.principal not in ("User:*", "User:mirror")
            origins = plan.origins[binding]
            assert all(o.operation in ca.TOPIC_OPERATIONS and o.operation != "WRITE" for o in origins), origins
            assert {(o.host, o.permission) for o in origins} == {(binding.host, binding.permission)}
            if binding.resource_type == "TOPIC":
                assert _is_target_of_selected(profile, binding.resource_name, binding.pattern_type), binding
            else:
                assert binding.resource_type == "GROUP", binding
                if profile.mirror.groups.enabled:
                    selection = profile.mirror.groups.selection()
                    assert binding.pattern_type == "PREFIXED" or selection.matches(binding.resource_name), binding
                    assert binding.pattern_type == "LITERAL" or binding.resource_name.startswith("team-"), binding
        for origin in source:  # ALL on a selected topic by a consumer always gives READ
            copyable = origin.principal in ("User:alice", "User:bob", "User:carol") and origin.permission == "ALLOW"
            if (
                copyable
                and origin.operation == "ALL"
                and origin.resource_type == "TOPIC"
                and origin.pattern_type == "LITERAL"
            ):
                if origin.resource_name in ("payments", "orders.eu"):
                    assert any(b.operation == "READ" and origin in plan.origins[b] for b in plan.bindings)
            if origin.operation == "WRITE":
                assert not any(origin in origins for origins in plan.origins.values())
        subprocess.run(["bash", "-n"], input=ca.consumer_acls_script(plan, profile), text=True, check=True)
        assert all(ca.unscriptable(binding) is None for binding in plan.bindings)
        assert set(plan.present or ()) <= set(plan.bindings)
        assert set(plan.to_add) | set(plan.present or ()) == set(plan.bindings)
