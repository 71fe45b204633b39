"""One spawned process per identity, whose environment names that identity's krb5.conf and ticket cache.

librdkafka (through cyrus-sasl) and MIT krb5 read ``KRB5_CONFIG`` and ``KRB5CCNAME`` from the process
environment, so each identity gets a process of its own; ours is never changed. Unlike ``call_isolated`` a
worker serves several calls (the target's second phase reuses the first's ticket cache) and every call has a
deadline: a worker that does not answer in time is killed, so pre-flight never hangs.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable

from secure_mirror.profile.secrets import adopt, env_secrets, withheld_from_children


class WorkerTimeout(Exception):
    pass


class WorkerError(Exception):
    pass


def _serve(env: dict[str, str], conn, secrets: dict[str, str]) -> None:
    os.environ.update(env)  # the worker's own environment, set before any Kerberos library is loaded
    adopt(secrets)  # env: secrets come through the pipe, so that no process inherits them
    while True:
        job = conn.recv()
        if job is None:
            return
        fn, args = job
        try:
            conn.send((True, fn(*args)))
        except Exception as exc:  # noqa: BLE001 - library exceptions may not pickle; carry their text
            conn.send((False, f"{type(exc).__name__}: {exc}"))


class Worker:
    def __init__(self, env: dict[str, str]):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(env, child, env_secrets()), daemon=True)
        with withheld_from_children():
            self.proc.start()
        child.close()

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

    def close(self) -> None:
        if self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(5)
        self.kill()
        self.conn.close()
