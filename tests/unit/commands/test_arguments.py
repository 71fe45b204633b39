"""One type for every option that takes seconds (``commands/arguments.seconds``): every command's ``--timeout`` and
``run --status-interval`` use it, and a value that is not a positive number of seconds is a usage error: one
sentence naming the option, exit 2, before anything is read or asked."""

from __future__ import annotations

import argparse

import pytest

from secure_mirror import cli
from secure_mirror.commands import arguments
from secure_mirror.errors import EXIT_BAD_INPUT


def _seconds_options() -> dict[tuple[str, str], object]:
    parser, _ = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        (name, option): action.type
        for name, sub in commands.choices.items()
        for action in sub._actions
        for option in action.option_strings
        if option in ("--timeout", "--status-interval")
    }


def test_every_timeout_has_the_one_type():
    found = _seconds_options()
    assert {name for name, option in found if option == "--timeout"} == {"preflight", "acls", "cutover", "failback"}
    assert set(found.values()) == {arguments.seconds}


@pytest.mark.parametrize(("text", "value"), [("900", 900.0), ("0.5", 0.5), ("1e3", 1000.0), ("999999", 999999.0)])
def test_a_positive_number_of_seconds_is_taken(text, value):
    assert arguments.seconds(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "-inf", "1e6", "ten", ""])
def test_anything_else_is_refused_in_one_sentence(text):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        arguments.seconds(text)
    assert str(refused.value) == f"{text!r} is not a positive number of seconds below 1000000"


@pytest.mark.parametrize(
    "argv",
    [
        ["cutover", "p.yaml", "--all-groups", "--as-admin", "a", "--run-dir", "d"],
        ["failback", "p.yaml", "--back", "b", "--as-admin", "a", "--run-dir", "d", "--back-run-dir", "e"],
        ["preflight", "p.yaml"],
        ["acls", "p.yaml", "--consumers"],
    ],
)
def test_a_bad_timeout_is_bad_input_for_every_command(argv, capsys):
    with pytest.raises(SystemExit) as ended:
        cli.main([*argv, "--timeout", "0"])
    assert ended.value.code == EXIT_BAD_INPUT
    said = capsys.readouterr().err.splitlines()[-1]
    assert said == "secure-mirror: error: argument --timeout: '0' is not a positive number of seconds below 1000000"
