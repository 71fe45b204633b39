"""``secure-mirror run``: render the profile into a private folder, then run its ``spark/spark-submit.sh`` (the
very command an operator would run), watch it, stop it cleanly on SIGTERM/Ctrl-C, and restart it when asked.

Secrets never reach a command line: the job's files carry references its JVMs resolve (``--secrets references``, the
default: run/secret_files.py), or the values, in 0600 option files (``--secrets values``). The job runs in a
session of its own; a stop request is forwarded to the job's Python driver, which stops the query between two
batches. With ``supervise`` a failed job is started again after a growing pause, a bounded number of times.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from secure_mirror import folders
from secure_mirror.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, BadInputError, EnvironmentNotReady
from secure_mirror.preflight import PASS, Report, render_table
from secure_mirror.preflight.table import report_output
from secure_mirror.profile import policy
from secure_mirror.profile.job_settings import UNTIL_CAUGHT_UP_CONTINUOUS, profile_fingerprint
from secure_mirror.profile.models import Profile
from secure_mirror.profile.secrets import withheld_from_children
from secure_mirror.render import render_all
from secure_mirror.render.providers import REFERENCES, Secrets
from secure_mirror.run import checkpoint, class_cache, control_folder, secret_files
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.run.groups import sync as group_sync
from secure_mirror.run.json_lines import OutcomeLine, PreflightLine, RestartLine, StartedLine, emit, is_run_line

BACKOFF_START, BACKOFF_MAX = 2.0, 60.0


@dataclass
class RunOptions:
    until_caught_up: bool = False
    supervise: bool = False
    max_restarts: int = 5
    trigger_interval: str = "5 seconds"
    metrics_file: str | None = None
    status_interval: float = 10.0
    skip_preflight: bool = False
    strict: bool = False  # pre-flight warnings stop the run too
    accept_unverified: bool = False  # start although pre-flight could not prove some required permissions
    keep_run_dir: bool = False
    json_lines: bool = False  # run --json: stdout carries run/json_lines.py's lines only
    secrets: Literal["references", "values"] = "references"  # how the job's files carry secrets (render/providers.py)


def preflight_gate(
    profile: Profile,
    skip: bool,
    *,
    strict: bool = False,
    accept_unverified: bool = False,
    json_lines: bool = False,
) -> int | None:
    """Run pre-flight (``secure_mirror.preflight.run_preflight``); an exit code when it does not pass. Unverified
    required permissions stop the run too, unless the user accepts them (``--accept-unverified``)."""
    if skip:
        return None
    from secure_mirror.preflight import run_preflight

    report = run_preflight(profile)
    passed = report.ok(strict=strict, accept_unverified=accept_unverified)
    show_preflight(report, passed, json_lines)
    if passed:
        return None
    if report.ok(strict=strict, accept_unverified=True):
        print(
            "secure-mirror run: pre-flight could not prove every permission the mirror needs, the mirror was not "
            "started (prove them with secure-mirror preflight PROFILE --as-admin ADMIN, or pass "
            "--accept-unverified)",
            file=sys.stderr,
        )
    else:
        print(
            "secure-mirror run: pre-flight failed, the mirror was not started (use --skip-preflight to override)",
            file=sys.stderr,
        )
    return ended(EXIT_FAILED, "not-started", "pre-flight did not pass", json_lines)


def show_preflight(report: Report, passed: bool, json_lines: bool) -> None:
    """The pre-flight's verdict on stdout: its line (``run --json``), else a sentence when it passed, the table when
    it did not."""
    accepted = [check.id for check in report.unproven()] if passed else []
    if json_lines:
        emit(PreflightLine(kind="preflight", passed=passed, accepted_unverified=accepted, report=report_output(report)))
    elif passed:
        note = f"; accepted unverified: {', '.join(accepted)}" if accepted else ""
        checks = len(report.with_status(PASS))
        print(f"secure-mirror run: pre-flight passed ({checks} checks on both clusters{note})", flush=True)
    else:
        render_table(report)


def ended(code: int, status: str, message: str, json_lines: bool, ridden: dict | None = None) -> int:
    """``code``, after the outcome line (``run --json``; ``ridden``: the job's waits, when it said)."""
    if json_lines:
        line = {"kind": "outcome", "status": status, "exit_code": code, "message": message}
        emit(OutcomeLine.model_validate({**line, **({"ridden": ridden} if ridden else {})}))
    return code


def prepare(profile: Profile, run_dir: Path, secrets: Secrets = REFERENCES) -> Path:
    """Render into ``run_dir/render`` (spark/job.json included); returns the spark-submit script. With references,
    the ``env:`` secrets are handed to the job in ``run_dir/secrets`` (run/secret_files.py)."""
    render_dir = run_dir / "render"
    job_profile = secret_files.job_profile(profile, run_dir) if secrets.references else profile
    render_all(job_profile, render_dir, secrets=secrets)
    return render_dir / "spark" / "spark-submit.sh"


def job_environment(jvm_options: tuple[str, ...] = ()) -> dict[str, str]:
    """spark-submit and the job's Python from this installation (the virtualenv we run in); ``jvm_options`` go after
    the caller's ``SPARK_SUBMIT_OPTS`` (the spark-submit JVM's options)."""
    bin_dir = Path(sys.executable).parent
    submit = bin_dir / "spark-submit"
    if not submit.exists() and shutil.which("spark-submit") is None:
        raise EnvironmentNotReady("spark-submit was not found next to this Python or on PATH; install pyspark")
    env = dict(os.environ)
    env.update(
        {
            "SPARK_SUBMIT": str(submit) if submit.exists() else "spark-submit",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    if jvm_options:
        env["SPARK_SUBMIT_OPTS"] = " ".join([*filter(None, [env.get("SPARK_SUBMIT_OPTS")]), *jvm_options])
    return env


class _Stopper:
    """Turns SIGTERM/SIGINT of this process into a clean stop of the job (when we may install handlers)."""

    def __init__(self):
        self.signal: int | None = None
        self.previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self.previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def _on_signal(self, signum, _frame):
        self.signal = signum

    def __exit__(self, *_exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def _attempt(
    script: Path,
    args: list[str],
    control: ControlFolder,
    log: Path,
    stopper: _Stopper,
    cache: class_cache.Plan,
    json_lines: bool = False,
) -> dict:
    control.reset()
    with open(log, "a", encoding="utf-8") as err:
        print(f"secure-mirror run: driver's class-data archive: {cache.said}", file=err, flush=True)
        with withheld_from_children():  # the job reads its secrets where its files' references say (or from them)
            # cwd: the run folder, where Spark puts what it writes into its working folder (artifacts/), never
            # the folder the user started us from
            process = subprocess.Popen(
                ["bash", str(script), *args, control_folder.OPTION, str(control.path)],
                cwd=control.path,
                env=job_environment(cache.options),
                stdout=subprocess.PIPE if json_lines else None,
                stderr=err,
                start_new_session=True,
                encoding="utf-8",
                errors="replace",
            )
        relay = _relay(process.stdout) if process.stdout is not None else None
        forwarded = False
        while process.poll() is None:
            if stopper.signal is not None and not forwarded:
                forwarded = _forward_stop(process, control)
            time.sleep(0.2)
        if relay is not None:
            relay.join(timeout=10)
    result = control.result()
    ended_well = result is not None and result.get("exit_code") in (EXIT_OK, EXIT_INTERRUPTED)  # caught up or stopped
    if kept := class_cache.finish(cache, ended_well):
        print(f"secure-mirror run: {kept}", file=sys.stderr)
    if result is not None:
        return result
    return {
        "exit_code": EXIT_FAILED,
        "status": "failed",
        "retryable": True,
        "message": f"the Spark job ended with status {process.returncode} before it reported a result; see {log}",
    }


def _relay(stream) -> threading.Thread:
    """``run --json``: the job's stdout carries its JSON lines and, in client mode, its driver's stderr too (spark-submit
    merges the Python driver's two streams): run lines go on to stdout, every other line to stderr."""

    def relay() -> None:
        for line in stream:
            out = sys.stdout if is_run_line(line) else sys.stderr
            out.write(line)
            out.flush()

    thread = threading.Thread(target=relay, name="secure-mirror-job-output", daemon=True)
    thread.start()
    return thread


def _forward_stop(process: subprocess.Popen, control: ControlFolder) -> bool:
    control.request_stop()
    if control.job_started():  # its pid may not be complete yet: the stop file tells it all the same
        pid = control.pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        return True
    os.killpg(process.pid, signal.SIGTERM)  # still starting: nothing to lose yet
    return True


def run_mirror(profile: Profile, options: RunOptions | None = None, *, run_dir: str | None = None, **overrides) -> int:
    """Run the mirror job of ``profile``; returns an exit code (see ``secure_mirror.run.job`` and ``errors``).

    ``overrides`` are RunOptions fields (``run_mirror(profile, until_caught_up=True)``).
    """
    options = options or RunOptions()
    for key, value in overrides.items():
        setattr(options, key, value)
    if options.until_caught_up and profile.mirror.continuous:
        raise BadInputError(UNTIL_CAUGHT_UP_CONTINUOUS)
    if run_dir:  # its absolute path lands in the rendered files the job runs with
        policy.check_argument(str(folders.named(run_dir)), "--run-dir")
        folders.check_creatable(folders.named(run_dir), "--run-dir")  # before pre-flight; made once the mirror starts
    if options.metrics_file:  # the job appends to it
        metrics = metrics_path(options.metrics_file)
        folders.check_not_a_link(metrics, "--metrics-file", "file")
        folders.check_creatable(metrics.parent, "--metrics-file's folder")
        if metrics.is_dir():
            raise BadInputError(f"--metrics-file {metrics} is a folder; name a file (lines are appended to it)")
    checkpoint.check_fingerprint(profile.mirror.checkpoint_location, profile_fingerprint(profile), profile)
    if (
        code := preflight_gate(
            profile,
            options.skip_preflight,
            strict=options.strict,
            accept_unverified=options.accept_unverified,
            json_lines=options.json_lines,
        )
    ) is not None:
        return code
    folder = folders.named(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix="secure-mirror-run-"))
    folders.make(folder, "--run-dir")
    try:
        return _run(profile, options, folder)
    finally:
        secret_files.remove(folder)
        if not options.keep_run_dir:
            shutil.rmtree(folder / "render", ignore_errors=True)  # with --secrets values, option files hold secrets


def metrics_path(named: str) -> Path:
    """``--metrics-file`` as an absolute path: its folder's links followed, never a link in the file's own place (the
    job refuses to write through one: ``folders.append``)."""
    path = folders.named(named)
    return path.parent.resolve() / path.name


def _run(profile: Profile, options: RunOptions, folder: Path) -> int:
    script = prepare(profile, folder, Secrets(options.secrets))
    metrics = str(metrics_path(options.metrics_file)) if options.metrics_file else str(folder / "metrics.jsonl")
    folders.make(Path(metrics).parent, "--metrics-file's folder", mode=0o777)
    log = folder / "job.log"
    print(f"secure-mirror run: job log {log}, metrics {metrics}", file=sys.stderr)
    if options.json_lines:
        emit(StartedLine(kind="started", run_dir=str(folder), job_log=str(log), metrics_file=metrics))
    groups = group_sync.start(
        profile, metrics_file=metrics
    )  # in this process, wherever the driver runs (docs/failover.md)
    try:
        return supervise(
            script,
            job_arguments(options, metrics),
            ControlFolder(folder),
            log,
            options,
            lambda: class_cache.plan(profile, os.environ),
        )
    finally:
        if groups is not None:
            groups.stop()


def job_arguments(options: RunOptions, metrics: str) -> list[str]:
    """The arguments ``spark-submit.sh`` passes on to the job (see ``secure_mirror.run.job``)."""
    args = [
        "--metrics-file",
        metrics,
        "--status-interval",
        str(options.status_interval),
        "--trigger-interval",
        options.trigger_interval,
    ]
    return args + ["--until-caught-up"] * options.until_caught_up + ["--json"] * options.json_lines


def supervise(
    script: Path,
    args: list[str],
    control: ControlFolder,
    log: Path,
    options: RunOptions,
    class_cache_plan: Callable[[], class_cache.Plan],
) -> int:
    """Run the job's script until it succeeds, is stopped, or fails in a way (or as often) that ends the run; each
    start asks again for the driver's class-data archive (an attempt that ended well may have written it)."""
    restarts, backoff = 0, BACKOFF_START
    with _Stopper() as stopper:
        while True:
            result = _attempt(script, args, control, log, stopper, class_cache_plan(), options.json_lines)
            if stopper.signal is not None:
                return _stopped(stopper.signal, options.json_lines, result.get("ridden"))
            code = int(result.get("exit_code", EXIT_FAILED))
            if code == EXIT_OK:
                return ended(EXIT_OK, result.get("status", "caught-up"), "", options.json_lines, result.get("ridden"))
            message = result.get("message") or f"the job failed; see {log}"
            retry = options.supervise and result.get("retryable") and restarts < options.max_restarts
            if not retry:
                print(f"secure-mirror run: {message}", file=sys.stderr)
                return ended(code, result.get("status", "failed"), message, options.json_lines, result.get("ridden"))
            restarts += 1
            print(
                f"secure-mirror run: the job failed ({message}); restart {restarts} of {options.max_restarts} "
                f"in {backoff:.0f} s",
                file=sys.stderr,
            )
            if options.json_lines:
                emit(
                    RestartLine(
                        kind="restart",
                        restart=restarts,
                        max_restarts=options.max_restarts,
                        delay_seconds=backoff,
                        message=message,
                    )
                )
            if (signum := _sleep(backoff, stopper)) is not None:
                return _stopped(signum, options.json_lines)
            backoff = min(backoff * 2, BACKOFF_MAX)


def _stopped(signum: int, json_lines: bool = False, ridden: dict | None = None) -> int:
    """The job stopped on request, between two batches: 130 for Ctrl-C (SIGINT), 0 for SIGTERM."""
    name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    message = f"stopped on {name}; run it again to resume from the checkpoint"
    print(f"secure-mirror run: {message}", file=sys.stderr)
    return ended(EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_OK, "stopped", message, json_lines, ridden)


def _sleep(seconds: float, stopper: _Stopper) -> int | None:
    """Wait, unless a stop is requested (the signal that asked)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if stopper.signal is not None:
            return stopper.signal
        time.sleep(0.2)
    return None
