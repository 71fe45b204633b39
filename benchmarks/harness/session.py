"""A benchmark's session: a work folder kept for the contenders' logs when a run fails (:func:`kept_on_failure`),
and a sandbox with it, the running one or a fresh one (:func:`sandbox_session`), whose contenders run one after
another, each recorded with its result or its error (:meth:`Session.each`)."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness import admin
from benchmarks.harness.cli import log
from secure_mirror.sandbox import Sandbox


@contextlib.contextmanager
def kept_on_failure(prefix: str):
    """A work folder, removed after a run that succeeded and kept (its path printed) for the logs of one that failed."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    except BaseException:
        log(f"failed; the contenders' logs are kept in {work}")
        raise
    shutil.rmtree(work, ignore_errors=True)


@dataclass
class Session:
    """A benchmark's sandbox and work folder; :meth:`keep` keeps the folder (the contenders' logs) after the run."""

    sb: Sandbox
    work: Path
    kept: bool = False

    def keep(self) -> None:
        self.kept = True

    def each(self, label: str, names, make: Callable, results: dict, shown: Callable[[dict], object]) -> None:
        """Each contender in turn (``make(name)`` builds one with ``run()`` and ``tear_down()``): ``results[name]`` is
        its result, or its error (the folder then kept), and the next one still runs; ``shown`` picks what is logged."""
        for name in names:
            log(f"{label}: {name}")
            contender = make(name)
            try:
                results[name] = contender.run()
            except Exception as exc:  # noqa: BLE001 - recorded; the other contenders still run
                self.keep()
                results[name] = {"error": f"{type(exc).__name__}: {str(exc)[:800]}"}
            finally:
                contender.tear_down()
            log(f"{label}: {name}: {json.dumps(shown(results[name]))}")


@contextlib.contextmanager
def sandbox_session(sandbox: Path | None, prefix: str):
    """A work folder and a sandbox: the running one in ``sandbox`` (left running), else a fresh one in the folder
    (stopped after). The folder is removed afterwards unless the run failed or :meth:`Session.keep` was called; the
    benchmark's admin clients are dropped before the sandbox goes."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    session: Session | None = None
    try:
        session = Session(Sandbox.load(sandbox) if sandbox else Sandbox.up(work / "sandbox"), work)
        try:
            yield session
        finally:
            admin.drop_kept()
            if not sandbox:
                session.sb.down()
    except BaseException:
        log(f"failed; the contenders' logs are kept in {work}")
        raise
    if session.kept:
        log(f"the contenders' logs are kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
