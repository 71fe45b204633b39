"""``groups`` from main(), the clusters' answers given in place of the servers (a Session that answers from memory):
which groups it asks about for names and patterns, what it prints in each mode, and the exact sentence (exit 2) of
every misuse, before or after a cluster is asked."""

from __future__ import annotations

import json

import pytest

from secure_mirror.cli import main
from tests.support.output_schemas import assert_valid
from tests.support.profiles import profile_data, write_profile
from tests.unit.run.groups.test_report import GROUPS, observation

ASKED: list = []  # what each fake session was asked: ("listed",) and ("observe", names)


class Session:
    map_topic, checkpoints_topic = "map", "src.checkpoints.internal"

    def __init__(self, profile):
        self.profile = profile

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def selected_groups(self):
        ASKED.append(("listed",))
        return sorted(GROUPS)

    def observe(self, groups):
        ASKED.append(("observe", groups))
        return observation({g: GROUPS.get(g, ({}, {}, 0, None)) for g in (GROUPS if groups is None else groups)})


@pytest.fixture
def groups_command(tmp_path, monkeypatch):
    ASKED.clear()
    monkeypatch.setattr("secure_mirror.commands.groups.Session", Session)
    data = profile_data(tmp_path)
    data["mirror"]["groups"] = {"include": "app-.*,bill-.*"}
    path = str(write_profile(tmp_path, data))
    return lambda *argv: main(["groups", path, *argv])


def test_without_a_group_the_summary_comes_first_then_the_groups_that_need_attention(groups_command, capsys):
    assert groups_command() == 0
    out = capsys.readouterr().out.splitlines()
    assert ASKED == [("observe", None)]  # every selected group: listed once, inside observe
    assert out[0] == "8 groups" and out[4] == "6 groups need attention (--all lists every group):"
    assert not any(line.startswith("app-a ") for line in out)  # following the mirror: counted, not listed
    assert groups_command("--all") == 0
    assert any(line.startswith("app-a ") for line in capsys.readouterr().out.splitlines())


def test_a_pattern_lists_once_and_observes_only_its_matches(groups_command, capsys):
    assert groups_command("--group", "bill-*", "--group", "app-a") == 0
    assert ASKED == [("listed",), ("observe", ["bill-e", "bill-f", "bill-g", "bill-h", "app-a"])]
    assert capsys.readouterr().out.splitlines()[0] == "5 groups"


def test_groups_named_one_by_one_print_todays_full_table(groups_command, capsys):
    assert groups_command("--group", "app-a", "--group", "app-b", "--group", "app-a") == 0
    assert ASKED == [("observe", ["app-a", "app-b"])]  # no listing
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["Group", "Topic", "Partition"] and [line.split()[0] for line in out[1:]] == [
        "app-a",
        "app-b",
    ]


def test_json_pages_carry_the_totals_and_the_whole_summary(groups_command, capsys):
    assert groups_command("--json", "--page-size", "3", "--after", "app-c") == 0
    printed = capsys.readouterr().out
    assert_valid("groups", printed)
    page = json.loads(printed)
    assert [g["group"] for g in page["groups"]] == ["app-d", "bill-e", "bill-f"]
    assert (page["pages"], page["page_size"], page["after"], page["next_after"]) == (3, 3, "app-c", "bill-f")
    assert page["summary"]["groups"] == 8 and page["summary"]["sync_states"]["following"] == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--group", "pay-*", "--group", "app-a", "--group", "x?"],
            "--group 'pay-*' and 'x?': each matches none of the 8 groups mirror.groups.include selects on the source "
            "(src); check the pattern, or list the groups with `secure-mirror groups PROFILE`",
        ),
        (["--page-size", "10"], "--page-size and --after page the output of --json; add --json"),
        (["--after", "app-a"], "--page-size and --after page the output of --json; add --json"),
        (
            ["--json", "--all"],
            "--all chooses the table's groups; --json prints every group (a page of them with --page-size)",
        ),
    ],
)
def test_misuse_is_one_sentence_and_exit_2(groups_command, capsys, argv, message):
    assert groups_command(*argv) == 2
    captured = capsys.readouterr()
    assert captured.err == f"secure-mirror groups: {message}\n" and captured.out == ""


def test_a_page_size_is_a_whole_number_above_0(groups_command, capsys):
    with pytest.raises(SystemExit) as exited:
        groups_command("--json", "--page-size", "0")
    assert exited.value.code == 2
    assert "argument --page-size: '0' is not a whole number above 0" in capsys.readouterr().err


def test_a_pattern_needs_the_profiles_groups(tmp_path, capsys):
    path = str(write_profile(tmp_path, profile_data(tmp_path)))  # mirror.groups not set
    assert main(["groups", path, "--group", "billing-*"]) == 2
    assert capsys.readouterr().err == (
        "secure-mirror groups: --group 'billing-*' is a pattern, matched against the groups mirror.groups.include "
        "selects, and the profile selects none; name the groups exactly, or set mirror.groups.include\n"
    )
