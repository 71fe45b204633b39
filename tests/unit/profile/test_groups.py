"""``mirror.groups`` (issue 28): which consumer groups' offsets follow the mirror, validated so that every include piece
is a grant Kafka's ACLs can express (a literal group id or ``prefix.*``; never a regex, never every group), with every
problem at once, each with its field path and fix."""

from __future__ import annotations

import pytest

from secure_mirror.profile import groups
from secure_mirror.profile.groups import GroupSelection, classify
from tests.support.profiles import load, profile_data
from tests.unit.profile.test_profile import problems_of

HOW = (
    "a group grant is a literal group id (write a '.' in it as \\., e.g. app\\.orders) or a prefix written prefix.* "
    "(e.g. app\\..*)"
)


def test_groups_are_off_unless_included(tmp_path):
    off = load(tmp_path).mirror.groups
    assert not off.enabled and off.include is None
    assert off.exclude == "console-consumer-.*,connect-.*,__.*" and off.sync_interval_seconds == 5
    assert off.selection().select(["app", "x"]) == []


def test_a_literal_and_a_prefix_are_accepted_and_selected(tmp_path):
    synced = load(tmp_path, groups={"include": "app\\.orders, billing.*", "sync_interval_seconds": 2}).mirror.groups
    assert synced.enabled and synced.sync_interval_seconds == 2
    names = ["app.orders", "appXorders", "billing", "billing-eu", "connect-billing", "other"]
    assert synced.selection().select(names) == ["app.orders", "billing", "billing-eu"]


@pytest.mark.parametrize(
    ("piece", "kind", "value"),
    [
        ("app\\.orders", "literal", "app.orders"),
        ("app-1_x", "literal", "app-1_x"),
        ("team:a b", "literal", "team:a b"),  # no metacharacter: one string only
        ("app.*", "prefix", "app"),
        ("app\\..*", "prefix", "app."),
        (".*", "prefix", ""),
    ],
)
def test_a_piece_is_granted_as_written(piece, kind, value):
    assert classify(piece) == groups.GroupResource(kind, value)


@pytest.mark.parametrize("piece", ["app.orders", "(eu|us)-readers", "app.*x", "a\\d", "app[0-9]", "a+"])
def test_a_regex_is_not_a_grant(piece):
    assert classify(piece) is None


@pytest.mark.parametrize(
    ("piece", "problem"),
    [
        (
            "app.orders",
            "app.orders is a regex, which a Kafka ACL cannot express (for the group app.orders write app\\.orders); "
            + HOW,
        ),
        (
            "app.eu.*",
            "app.eu.* is a regex, which a Kafka ACL cannot express (for groups starting with app.eu write "
            "app\\.eu.*); " + HOW,
        ),
        ("(eu|us)-readers", "(eu|us)-readers is a regex, which a Kafka ACL cannot express; " + HOW),
        (
            ".*",
            ".* selects every consumer group, and its grants would be GROUP '*' (every group of the cluster, other "
            "applications' included); list the groups, or the prefixes of those whose offsets should follow",
        ),
        (
            "\\*",
            "\\* names a group holding '*', which Kafka's authorizer reads as every group in a grant; name the "
            "groups without '*'",
        ),
        (
            "secure-mirror-src-tgt.*",
            "secure-mirror-src-tgt.* names the mirror's own consumer groups (secure-mirror-*: Spark's and "
            "exactly_once's positions), which are never synced; remove it",
        ),
    ],
)
def test_validate_refuses_a_piece_no_grant_can_express(tmp_path, piece, problem):
    data = profile_data(tmp_path, groups={"include": piece})
    assert problems_of(tmp_path, data) == [f"mirror.groups.include: {problem}"]


def test_every_problem_is_told_at_once(tmp_path):
    data = profile_data(tmp_path, groups={"include": "ok, (a|b), .*", "exclude": "x{1", "sync_interval_seconds": 0})
    found = problems_of(tmp_path, data)
    assert [line.split(":", 1)[0] for line in found] == [
        "mirror.groups.include",
        "mirror.groups.exclude",
        "mirror.groups.sync_interval_seconds",
    ]
    assert found[0] == (
        f"mirror.groups.include: (a|b) is a regex, which a Kafka ACL cannot express; {HOW}; .* selects every consumer "
        "group, and its grants would be GROUP '*' (every group of the cluster, other applications' included); list "
        "the groups, or the prefixes of those whose offsets should follow"
    )  # the literal 'ok' is fine


def test_a_named_group_the_exclusions_drop_is_refused(tmp_path):
    data = profile_data(tmp_path, groups={"include": "billing, connect-billing"})
    assert problems_of(tmp_path, data) == [
        "mirror.groups.include: names 'connect-billing', which mirror.groups.exclude (or the mirror's own "
        "secure-mirror-*) excludes: it would never be synced; remove it, or narrow mirror.groups.exclude"
    ]
    # the user's own exclusions replace MirrorMaker 2's
    assert load(tmp_path, groups={"include": "connect-billing", "exclude": "tmp-.*"}).mirror.groups.enabled


def test_the_mirrors_own_groups_are_never_selected():
    selection = GroupSelection.parse("s.*", "")
    assert selection.select(["sales", "secure-mirror-src-tgt-eos-orders-0", "secure-mirror-a-b-x"]) == ["sales"]
    assert selection.java_pattern() == "(?!(?:secure-mirror-.*)$)(?:s.*)"


def test_a_source_alias_too_long_for_the_group_topics_is_refused_with_groups_only(tmp_path):
    data = profile_data(tmp_path, groups={"include": "billing"})
    data["source"]["alias"] = "a" * 225  # secure_mirror.offset-map.<alias>.internal: 259 characters
    found = problems_of(tmp_path, data)
    assert found == [
        f"source.alias: with mirror.groups the target gets the topic secure_mirror.offset-map.{'a' * 55}..."
        "(259 characters), over Kafka's limit of 249 characters; shorten source.alias"
    ]
