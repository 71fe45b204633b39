"""Both-way flows as pure decisions: MirrorMaker 2's isCycle as a topic exclusion, the reverse profile, the
heartbeat settings, and what verify compares by provenance."""

from __future__ import annotations

import pytest
import yaml

from secure_mirror.cli import main
from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.profile.cycles import cycle_pattern
from secure_mirror.profile.reverse import ReverseRefused, reverse_checkpoint, reverse_data
from secure_mirror.verify.compare import provenance_rules
from secure_mirror.verify.scan import LAST_FROM, NOT_FROM, provenance_keeps
from tests.support import profiles as pf


@pytest.mark.parametrize(
    ("rename", "mirrored", "excluded"),
    [
        ({"rule": "alias_prefix"}, ["orders", "orders.tgt", "src.orders"], ["tgt.orders", "x.tgt.orders"]),
        (
            {"rule": "template", "template": "{source_alias}_{topic}"},
            ["orders", "tgtorders"],
            ["tgt_orders", "a_tgt_o"],
        ),
        ({"rule": "template", "template": "m.{target_alias}.{source_alias}.{topic}"}, ["m.tgt.src.o"], ["m.src.tgt.o"]),
        ({"rule": "template", "template": "mirror.{topic}"}, ["mirror.orders", "tgt.orders"], []),
        ({"rule": "identity"}, ["orders", "tgt.orders"], []),
    ],
)
def test_topics_the_rule_names_after_the_target_are_never_mirrored(tmp_path, rename, mirrored, excluded):
    profile = pf.load(tmp_path, rename=rename, topics={"include": ".*", "grant_all_topics": True})
    selection = profile.selection()
    assert [t for t in mirrored if selection.matches(t)] == mirrored
    assert [t for t in excluded if selection.matches(t)] == []


def test_the_cycle_pattern_is_mm2s_recursion_under_its_separator():
    assert cycle_pattern("{source_alias}.{topic}", "A", "B", ".") == "(?:.*\\.)?B\\..+"
    assert cycle_pattern("{topic}", "A", "B") is None


def _forward(tmp_path, **mirror):
    data = pf.profile_data(tmp_path, **mirror)
    return data, load_profile(pf.write_profile(tmp_path, data))


def test_the_way_back_swaps_the_sides_maps_names_back_and_keeps_the_groups(tmp_path):
    data, profile = _forward(tmp_path, groups={"include": "app-.*"})
    back = reverse_data(data, profile)
    assert back["source"] == data["target"] and back["target"] == data["source"]
    assert back["mirror"]["rename"] == {"rule": "identity"}
    assert back["mirror"]["topics"] == {"include": "orders.*,payments", "exclude": ".*\\.tmp,(?:.*\\.)?src\\..+"}
    assert back["mirror"]["provenance_headers"] is True
    assert back["mirror"]["groups"] == {"include": "app-.*"}
    assert back["mirror"]["checkpoint_location"] == f"{tmp_path / 'checkpoints'}.tgt-to-src"
    reversed_profile = load_profile(pf.write_profile(tmp_path, back))  # valid like any profile
    selection = reversed_profile.selection()
    assert selection.matches("orders") and not selection.matches("src.orders")  # A's copies on B stay there
    assert reversed_profile.target_topic("orders") == "orders"


def test_kept_names_without_provenance_cannot_be_reversed(tmp_path):
    data, profile = _forward(tmp_path, rename={"rule": "identity"})
    with pytest.raises(ReverseRefused, match="mirror.provenance_headers: true"):
        reverse_data(data, profile)
    data, profile = _forward(tmp_path, rename={"rule": "identity"}, provenance_headers=True)
    assert reverse_data(data, profile)["mirror"]["topics"] == data["mirror"]["topics"]


def test_reversing_twice_gives_the_forward_checkpoint_back():
    there = reverse_checkpoint("/c", "src", "tgt")
    assert there == "/c.tgt-to-src" and reverse_checkpoint(there, "tgt", "src") == "/c"


def test_the_command_writes_a_loadable_profile_and_refuses_an_existing_file(tmp_path, capsys):
    data, _ = _forward(tmp_path, rename={"rule": "identity"}, provenance_headers=True)
    out = tmp_path / "back.yaml"
    assert main(["reverse", str(tmp_path / "profile.yaml"), "--out", str(out)]) == 0
    back = load_profile(out)
    assert (back.source.alias, back.target.alias) == ("tgt", "src")
    assert yaml.safe_load(out.read_text())["mirror"]["rename"] == {"rule": "identity"}
    assert main(["reverse", str(tmp_path / "profile.yaml"), "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err


def test_heartbeats_must_be_judged_stale_after_more_than_an_interval(tmp_path):
    with pytest.raises(ProfileError, match="stale_after_seconds: must be more than interval_seconds"):
        pf.load(tmp_path, heartbeats={"interval_seconds": 10, "stale_after_seconds": 10})
    assert not pf.load(tmp_path, heartbeats={"interval_seconds": 0}).mirror.heartbeats.enabled
    assert pf.load(tmp_path).mirror.heartbeats.interval_seconds == 1  # MirrorMaker 2's default


def test_verify_leaves_out_what_came_from_the_target_and_others_records_in_kept_names(tmp_path):
    kept = pf.load(tmp_path, rename={"rule": "identity"}, provenance_headers=True)
    rules = provenance_rules(kept, "TGT-ID")
    assert rules == {
        "source": (NOT_FROM, "secure-mirror.cluster-id", "TGT-ID"),
        "target": (LAST_FROM, "secure-mirror.cluster", "src"),
    }
    assert provenance_rules(pf.load(tmp_path), None) == {"source": None, "target": None}
    looped = [("secure-mirror.cluster", b"tgt"), ("secure-mirror.cluster-id", b"TGT-ID")]
    assert not provenance_keeps(looped, rules["source"]) and provenance_keeps([("h", b"1")], rules["source"])
    two_hops = [("secure-mirror.cluster", b"x"), ("secure-mirror.cluster", b"src")]
    assert provenance_keeps(two_hops, rules["target"]) and not provenance_keeps(None, rules["target"])
    assert not provenance_keeps(list(reversed(two_hops)), rules["target"])
