"""One spawned process per identity, whose environment names that identity's krb5.conf and ticket cache.

librdkafka (through cyrus-sasl) and MIT krb5 read ``KRB5_CONFIG`` and ``KRB5CCNAME`` from the process
environment, so each identity gets a process of its own; ours is never changed. A worker serves several calls (the
target's second phase reuses the first's ticket cache), as ``call_isolated``'s kept processes do, and unlike those
every call has a deadline: a worker that does not answer in time is killed, so pre-flight never hangs.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from collections.abc import Callable
from typing import NoReturn

from secure_mirror.profile.secrets import adopt, env_secrets, withheld_from_children


class WorkerTimeout(Exception):
    pass


class WorkerError(Exception):
    pass


def _serve(env: dict[str, str], conn, secrets: dict[str, str]) -> None:
    os.environ.update(env)  # the worker's own environment, set before any Kerberos library is loaded
    adopt(secrets)  # env: secrets come through the pipe, so that no process inherits them
    # a short-lived process that builds tens of thousands of objects per call (a future and a description per topic):
    # collecting cycles every 700 allocations cost a third of describing 10,000 topics; every 50,000 is plenty
    gc.set_threshold(50_000, 20, 20)
    while True:
        job = conn.recv()
        if job is None:
            _leave()
        fn, args = job
        try:
            conn.send((True, fn(*args)))
        except Exception as exc:  # noqa: BLE001 - library exceptions may not pickle; carry their text
            conn.send((False, f"{type(exc).__name__}: {exc}"))


def _leave() -> NoReturn:
    """End the worker at once, its Kafka clients unclosed: closing a librdkafka client can wait a second for its
    broker threads, and nothing of theirs needs a goodbye (no record is produced; the probes' consumers closed
    themselves, leaving their group): the operating system closes their connections."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class Worker:
    def __init__(self, env: dict[str, str]):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(env, child, env_secrets()), daemon=True)
        with withheld_from_children():
            self.proc.start()
        child.close()
        self.released = False

    def submit(self, fn: Callable, *args) -> None:
        self.conn.send((fn, args))

    def result(self, timeout: float):
        if not self.conn.poll(timeout):
            self.kill()
            raise WorkerTimeout(f"no answer within {timeout:g}s")
        try:
            ok, value = self.conn.recv()
        except EOFError:
            raise WorkerError(f"the worker process ended (exit code {self.proc.exitcode})") from None
        if not ok:
            raise WorkerError(value)
        return value

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)

    def release(self) -> None:
        """Tell the worker it has no more work: it ends (``_leave``) while the caller goes on; ``close`` then reaps
        it."""
        if not self.released and self.proc.is_alive():
            self.released = True
            try:
                self.conn.send(None)
            except OSError:
                pass

    def close(self) -> None:
        self.release()
        self.proc.join(5)
        self.kill()
        self.conn.close()
