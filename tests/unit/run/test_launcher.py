"""The launcher's supervision, with a real bash script in the place of the rendered spark-submit.sh: it receives the
job's arguments and the control folder, and answers through that folder as the job does."""

from __future__ import annotations

import json
import signal

import pytest

from secure_mirror.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED
from secure_mirror.run import class_cache, launcher
from secure_mirror.run.control_folder import PID_FILE, RESULT_FILE, STOP_FILE, ControlFolder
from secure_mirror.run.launcher import RunOptions, job_arguments, supervise

# Each attempt appends its arguments and working folder to attempts.log, then answers with the next line of
# answers.txt: a result (JSON) written to the control folder, or "exit N" without a result.
SCRIPT = """#!/usr/bin/env bash
control="${@: -1}"
here="$(dirname "$0")"
echo "$PWD $*" >> "$here/attempts.log"
n=$(wc -l < "$here/attempts.log")
answer="$(sed -n "${n}p" "$here/answers.txt")"
case "$answer" in
  exit*) exit "${answer#exit }" ;;
  archive*) echo "$SPARK_SUBMIT_OPTS" > "$here/opts.txt"; echo dumped > "${SPARK_SUBMIT_OPTS##*ArchiveClassesAtExit=}"
            echo $$ > "$control/@PID@"; echo "${answer#archive }" > "$control/@RESULT@" ;;
  *) echo $$ > "$control/@PID@"; echo "$answer" > "$control/@RESULT@" ;;
esac
""".replace("@PID@", PID_FILE).replace("@RESULT@", RESULT_FILE)


def _result(code: int, retryable: bool, message: str = "") -> str:
    return json.dumps({"exit_code": code, "status": "x", "message": message, "retryable": retryable})


@pytest.fixture
def job(tmp_path, monkeypatch):
    monkeypatch.setattr(launcher, "BACKOFF_START", 0.01)
    script_dir, run_dir = tmp_path / "spark", tmp_path / "run"
    script_dir.mkdir()
    run_dir.mkdir()
    script = script_dir / "spark-submit.sh"
    script.write_text(SCRIPT)

    def run(answers: list[str], plans=None, **options) -> tuple[int, list[str]]:
        (script_dir / "answers.txt").write_text("\n".join(answers) + "\n")
        plans = iter(plans or [class_cache.Plan("not used")] * len(answers))
        code = supervise(
            script,
            ["--metrics-file", "m.jsonl"],
            ControlFolder(run_dir),
            run_dir / "job.log",
            RunOptions(**options),
            lambda: next(plans),
        )
        log = script_dir / "attempts.log"
        return code, log.read_text().splitlines() if log.exists() else []

    run.run_dir = run_dir
    return run


def test_the_job_runs_in_the_run_folder_with_its_arguments_and_the_control_folder(job):
    code, attempts = job([_result(EXIT_OK, False)])
    assert code == EXIT_OK
    assert attempts == [f"{job.run_dir} --metrics-file m.jsonl --control-dir {job.run_dir}"]


def test_a_job_that_ends_without_a_result_is_a_failure_naming_the_log(job, capsys):
    code, attempts = job(["exit 3"])
    assert (code, len(attempts)) == (EXIT_FAILED, 1)
    assert (
        f"the Spark job ended with status 3 before it reported a result; see {job.run_dir / 'job.log'}"
        in capsys.readouterr().err
    )


def test_supervise_restarts_a_retryable_failure_until_the_job_succeeds(job, capsys):
    code, attempts = job([_result(EXIT_FAILED, True, "broker gone"), "exit 1", _result(EXIT_OK, False)], supervise=True)
    assert (code, len(attempts)) == (EXIT_OK, 3)
    err = capsys.readouterr().err
    assert "the job failed (broker gone); restart 1 of 5" in err and "restart 2 of 5" in err


def test_supervise_gives_up_after_max_restarts(job):
    code, attempts = job(["exit 1"] * 5, supervise=True, max_restarts=2)
    assert (code, len(attempts)) == (EXIT_FAILED, 3)


def test_a_refusal_is_never_retried(job, capsys):
    code, attempts = job([_result(EXIT_REFUSED, False, "grant READ on t"), _result(EXIT_OK, False)], supervise=True)
    assert (code, len(attempts)) == (EXIT_REFUSED, 1)
    assert "secure-mirror run: grant READ on t" in capsys.readouterr().err


def test_without_supervise_a_retryable_failure_ends_the_run(job):
    code, attempts = job([_result(EXIT_FAILED, True), _result(EXIT_OK, False)])
    assert (code, len(attempts)) == (EXIT_FAILED, 1)


def test_the_control_folder_starts_every_attempt_empty(tmp_path):
    control = ControlFolder(tmp_path)
    for name in (PID_FILE, RESULT_FILE, STOP_FILE):
        (tmp_path / name).write_text("left over")
    assert control.pid() is None and control.stop_requested()  # a pid file that is not a number: no pid yet
    control.reset()
    assert sorted(p.name for p in tmp_path.iterdir()) == [] and control.result() is None
    control.write_pid(42)
    control.write_result({"exit_code": 0})
    assert (control.pid(), control.result(), control.stop_requested()) == (42, {"exit_code": 0}, False)


def test_job_arguments():
    assert job_arguments(RunOptions(), "/m") == [
        "--metrics-file",
        "/m",
        "--status-interval",
        "10.0",
        "--trigger-interval",
        "5 seconds",
    ]
    assert job_arguments(RunOptions(until_caught_up=True, trigger_interval="1 second"), "/m")[-3:] == [
        "--trigger-interval",
        "1 second",
        "--until-caught-up",
    ]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, EXIT_OK)])
def test_a_stop_on_request_is_130_for_ctrl_c_and_0_for_sigterm(signum, code, capsys):
    assert launcher._stopped(signum) == code
    assert "run it again to resume from the checkpoint" in capsys.readouterr().err


@pytest.mark.parametrize("below", ["", "x"])
def test_a_run_dir_that_cannot_be_made_is_bad_input_before_pre_flight(tmp_path, below, monkeypatch):
    from secure_mirror.errors import BadInputError
    from secure_mirror.profile import load_profile
    from tests.support.profiles import profile_data, write_profile

    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path)))
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setattr(launcher, "preflight_gate", lambda *a, **k: pytest.fail("pre-flight ran"))
    with pytest.raises(BadInputError) as caught:
        launcher.run_mirror(profile, RunOptions(), run_dir=str(tmp_path / "a-file" / below))
    assert str(caught.value).startswith(f"--run-dir {tmp_path / 'a-file' / below} cannot be created (")
    assert str(caught.value).endswith(f"({tmp_path / 'a-file'} is not a folder); choose another folder")
    assert (tmp_path / "a-file").read_text() == "x"


def test_a_run_dir_is_made_only_once_the_mirror_starts(tmp_path, monkeypatch):
    from secure_mirror.errors import EXIT_FAILED
    from secure_mirror.profile import load_profile
    from tests.support.profiles import profile_data, write_profile

    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path)))
    monkeypatch.setattr(launcher, "preflight_gate", lambda *a, **k: EXIT_FAILED)  # pre-flight refuses
    assert launcher.run_mirror(profile, RunOptions(), run_dir=str(tmp_path / "new" / "run")) == EXIT_FAILED
    assert not (tmp_path / "new").exists()


def test_the_archive_a_job_wrote_at_exit_is_kept_when_it_ended_well_and_dropped_when_it_failed(
    job, tmp_path, monkeypatch
):
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Xmx1g")
    archive = tmp_path / "spark-k.jsa"
    failed, well = (
        class_cache.Plan(
            "w",
            (f"-XX:ArchiveClassesAtExit={tmp_path}/spark-k.{n}.partial",),
            archive,
            tmp_path / f"spark-k.{n}.partial",
        )
        for n in (1, 2)
    )
    code, attempts = job(
        [f"archive {_result(EXIT_FAILED, True)}", f"archive {_result(EXIT_OK, False)}"],
        plans=[failed, well],
        supervise=True,
    )
    assert (code, len(attempts)) == (EXIT_OK, 2)
    assert not failed.dump.exists() and not well.dump.exists()
    assert archive.read_text() == "dumped\n"
    assert (tmp_path / "spark" / "opts.txt").read_text() == f"-Xmx1g -XX:ArchiveClassesAtExit={well.dump}\n"
