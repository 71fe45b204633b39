"""Names derived from the aliases: the mirror's group prefix (``groups.mirror_group_prefix``), which no two mirrors
share, and MirrorMaker 2's internal topics (``mm2_topics``), which Kafka must accept."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.profile.groups import mirror_group_prefix
from secure_mirror.profile.mm2_topics import INTERNAL_SEPARATOR_ENABLED, mm2_topic_problems, mm2_topics
from tests.support import profiles as pf
from tests.support import seeds

SEED = seeds.draw_seed("hypothesis @seed of the group prefix property")


# ---- the group prefix ------------------------------------------------------------------------------------------------
def test_aliases_without_a_dash_keep_their_prefix():
    assert mirror_group_prefix("src", "tgt") == "secure-mirror-src-tgt"
    assert mirror_group_prefix("east_1", "west_2") == "secure-mirror-east_1-west_2"


def test_the_pairs_that_shared_a_prefix_no_longer_do():
    assert mirror_group_prefix("a", "b-c") == "secure-mirror-a-b.c"
    assert mirror_group_prefix("a-b", "c") == "secure-mirror-a.b-c"
    assert mirror_group_prefix("a", "b-eos") != mirror_group_prefix("a", "b") + "-eos"  # no transactional id shared


aliases = st.text(alphabet="ab_-", min_size=1, max_size=5)  # Cluster.alias: [A-Za-z0-9_-]+


@seed(SEED)
@settings(max_examples=500, deadline=None)
@given(one=st.tuples(aliases, aliases), other=st.tuples(aliases, aliases))
def test_no_two_mirrors_share_a_group_or_a_transactional_id(one, other):
    """Every group id of a mirror starts with ``<prefix>-`` (Spark's ``-<uuid>...``, ``-eos-...``, ``-inspect``) and
    every transactional id with ``<prefix>-eos-``: for two different pairs of aliases, neither start is a start of
    the other's, so no id can be both mirrors'."""
    if one == other:
        return
    first, second = mirror_group_prefix(*one), mirror_group_prefix(*other)
    assert first != second
    for a, b in itertools.permutations((first, second)):
        assert not (b + "-").startswith(a + "-"), (one, other)
        assert not (b + "-eos-").startswith(a + "-eos-"), (one, other)
    for source, target in (one, other):  # an alias without '-' is written as it is
        if "-" not in source + target:
            assert mirror_group_prefix(source, target) == f"secure-mirror-{source}-{target}"


# ---- MirrorMaker 2's internal topics ---------------------------------------------------------------------------------
def _names(source="src", target="tgt", separator=".", properties=None) -> dict[str, tuple[str, str]]:
    return {t.kind: (t.name, t.side) for t in mm2_topics(source, target, separator, properties or {})}


def test_mirrormaker2s_names_with_the_default_policy():
    assert _names() == {
        "heartbeats": ("heartbeats", "target"),
        "checkpoints": ("src.checkpoints.internal", "target"),
        "configs": ("mm2-configs.src.internal", "target"),
        "offsets": ("mm2-offsets.src.internal", "target"),
        "status": ("mm2-status.src.internal", "target"),
        "copied heartbeats": ("src.heartbeats", "target"),
        "offset-syncs": ("mm2-offset-syncs.tgt.internal", "source"),
    }


def test_a_separator_is_in_the_internal_names_unless_turned_off():
    names = _names(separator="_", properties={"offset-syncs.topic.location": "target"})
    assert names["checkpoints"] == ("src_checkpoints_internal", "target")
    assert names["offset-syncs"] == ("mm2-offset-syncs_tgt_internal", "target")
    assert names["copied heartbeats"] == ("src_heartbeats", "target")
    assert names["configs"] == ("mm2-configs.src.internal", "target")  # Connect's names keep '.'
    names = _names(separator="_", properties={INTERNAL_SEPARATOR_ENABLED: "false"})
    assert names["checkpoints"][0] == "src.checkpoints.internal" and names["copied heartbeats"][0] == "src_heartbeats"
    assert _names(separator=None)["checkpoints"][0] == "src.checkpoints.internal"  # no policy: MirrorMaker 2's '.'


def test_the_longest_alias_each_name_allows():
    assert mm2_topic_problems("s" * 228, "t" * 223, ".", {}) == []
    assert mm2_topic_problems("s" * 229, "t" * 224, ".", {}) == [
        (
            "source.alias",
            f"MirrorMaker 2 (mm2/mm2.properties) would name its checkpoints topic on the target {'s' * 80}...(250 "
            "characters), over Kafka's limit of 249 characters; shorten source.alias to at most 228 characters",
        ),
        (
            "target.alias",
            "MirrorMaker 2 (mm2/mm2.properties) would name its offset-syncs topic on the source "
            f"mm2-offset-syncs.{'t' * 63}...(250 characters), over Kafka's limit of 249 characters; shorten "
            "target.alias to at most 223 characters",
        ),
    ]


def test_a_separator_too_long_for_the_internal_names_names_the_template():
    [(field, problem)] = mm2_topic_problems("src", "tgt", "_" * 120, {})
    assert field == "mirror.rename.template"
    assert problem.endswith(
        "over Kafka's limit of 249 characters; shorten the aliases and the separator of mirror.rename.template"
    )


@seed(SEED)
@settings(max_examples=300, deadline=None)
@given(
    source=st.integers(1, 260),
    target=st.integers(1, 260),
    separator=st.sampled_from([".", "_", "-", "__", "-x-"]),
    inner=st.booleans(),
)
def test_validate_refuses_exactly_the_names_kafka_would(source, target, separator, inner):
    properties = {} if inner else {INTERNAL_SEPARATOR_ENABLED: "false"}
    names = [t.name for t in mm2_topics("s" * source, "t" * target, separator, properties)]
    problems = mm2_topic_problems("s" * source, "t" * target, separator, properties)
    assert (problems == []) == all(len(name) <= 249 for name in names)
    for field, problem in problems:  # each names its field and a fix that makes every name fit
        if field.endswith(".alias"):
            longest = int(problem.rsplit("at most ", 1)[1].split()[0])
            shorter = {"source": ("s" * longest, "t" * target), "target": ("s" * source, "t" * longest)}[field[:6]]
            assert not [f for f, _ in mm2_topic_problems(*shorter, separator, properties) if f == field]


# ---- at validate, and on the profile ---------------------------------------------------------------------------------
def test_validate_refuses_an_alias_too_long_for_mirrormaker2(tmp_path):
    data = pf.profile_data(tmp_path, rename={"rule": "identity"})
    data["target"]["alias"] = "t" * 224  # the job's names are the source's: only MirrorMaker 2's offset-syncs is long
    with pytest.raises(ProfileError) as caught:
        load_profile(pf.write_profile(tmp_path, data))
    assert caught.value.problems == [
        "target.alias: MirrorMaker 2 (mm2/mm2.properties) would name its offset-syncs topic on the source "
        f"mm2-offset-syncs.{'t' * 63}...(250 characters), over Kafka's limit of 249 characters; shorten target.alias "
        "to at most 223 characters"
    ]
    data["target"]["alias"] = "t" * 223
    load_profile(pf.write_profile(tmp_path, data))


def test_the_profile_derives_its_names_here(tmp_path):
    data = pf.profile_data(tmp_path, rename={"rule": "template", "template": "{source_alias}_{topic}"})
    data["source"]["alias"], data["target"]["alias"] = "a-b", "c"
    profile = load_profile(pf.write_profile(tmp_path, data))
    assert (profile.group_prefix, profile.transactional_prefix) == ("secure-mirror-a.b-c", "secure-mirror-a.b-c-eos-")
    assert profile.own_groups == "secure-mirror-a.b-c-"  # the READ grant: not a start of mirror a-b -> cd's ids
    assert profile.mm2_target_topics == ("a-b_checkpoints_internal", "a-b_heartbeats")
