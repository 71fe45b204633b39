"""`secure-mirror run` options that cannot work are one sentence and exit 2 before pre-flight or Spark starts: an
interval Spark's trigger would not parse, a negative restart count, a status interval that is not a positive
number, a metrics file below a file, naming a folder or a symbolic link."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.profiles import profile_data, write_profile


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "secure_mirror", "run", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--trigger-interval", "bogus", "'bogus' is not an interval such as '5 seconds' or '500 milliseconds'"),
        ("--trigger-interval", "5s", "'5s' is not an interval"),
        ("--trigger-interval", "--until-caught-up", "expected one argument"),
        ("--max-restarts", "-1", "'-1' is not a whole number of restarts (0 or more)"),
        ("--max-restarts", "two", "'two' is not a whole number of restarts (0 or more)"),
        ("--status-interval", "0", "'0' is not a positive number of seconds"),
        ("--status-interval", "nan", "'nan' is not a positive number of seconds"),
    ],
)
def test_bad_option_values_are_usage_errors(tmp_path, option, value, said):
    done = _run(str(tmp_path / "profile.yaml"), option, value)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_metrics_file_that_cannot_be_written_is_refused_before_pre_flight(tmp_path):
    profile = write_profile(tmp_path, profile_data(tmp_path))
    (tmp_path / "a-file").write_text("x")
    below = _run(str(profile), "--metrics-file", str(tmp_path / "a-file" / "m.jsonl"), "--run-dir", str(tmp_path / "r"))
    assert below.returncode == 2, below.stderr
    assert (
        f"--metrics-file's folder {tmp_path / 'a-file'} cannot be created ({tmp_path / 'a-file'} is not a folder)"
        in (below.stderr)
    )
    folder = _run(str(profile), "--metrics-file", str(tmp_path), "--run-dir", str(tmp_path / "r"))
    assert folder.returncode == 2 and f"--metrics-file {tmp_path} is a folder; name a file" in folder.stderr
    assert not (tmp_path / "r").exists() and "pre-flight" not in below.stderr + folder.stderr


def test_a_metrics_file_that_is_a_symbolic_link_is_refused(tmp_path, capsys):
    from secure_mirror.cli import main

    profile = write_profile(tmp_path, profile_data(tmp_path))
    (tmp_path / "victim").write_text("mine\n")
    (tmp_path / "m.jsonl").symlink_to(tmp_path / "victim")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "nowhere")
    for link in ("m.jsonl", "dangling.jsonl"):
        assert (
            main(["run", str(profile), "--metrics-file", str(tmp_path / link), "--run-dir", str(tmp_path / "r")]) == 2
        )
        assert (
            f"--metrics-file {tmp_path / link} is a symbolic link, and nothing is written through one; name the file "
            "itself" in capsys.readouterr().err
        )
    assert (tmp_path / "victim").read_text() == "mine\n" and not (tmp_path / "nowhere").exists()
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("good", ["5 seconds", "1 second", "0 seconds", "500 milliseconds", "1 minute 30 seconds"])
def test_intervals_spark_reads_are_taken(good):
    from secure_mirror.commands.run import _interval

    assert _interval(good) == good
