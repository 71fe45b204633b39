"""One loop in a spawned process of its own, logged in as a side's admin, until it is stopped: the reliability suite's
background producers (tests/reliability/harness.BackgroundProducer), the group watch's members and samplers
(tests/reliability/group_watch), and the integration tests' holders of a state the job must meet
(tests/integration/test_task_transactions). The identity's secrets reach the process through multiprocessing's pipe,
never its argument list or a file."""

from __future__ import annotations

import multiprocessing

# what a loop sends on ``out`` once it holds what the test waits for (:meth:`Spawned.wait_ready`)
READY = {"ready": True}


class Spawned:
    """``loop(env, conf, *args, stop, out)`` in a spawned process as ``side``'s admin, until :meth:`stop`. The loop
    sends its result on ``out`` once ``stop`` is set; a loop that a test must wait for first sends :data:`READY`."""

    STOP_TIMEOUT = 180.0

    def __init__(self, sandbox, side: str, loop, *args, name: str):
        ctx = multiprocessing.get_context("spawn")
        self._stop = ctx.Event()
        self._recv, send = ctx.Pipe(duplex=False)
        conf = sandbox.client_conf(side, "admin")
        env = sandbox.identity_env(side, "admin")
        self._process = ctx.Process(target=loop, name=name, daemon=True, args=(env, conf, *args, self._stop, send))
        self._process.start()
        send.close()
        self.name = name
        self.result: dict | None = None

    def wait_ready(self, timeout: float) -> None:
        """Until the loop sent :data:`READY`; fails when it did not within ``timeout`` seconds or sent anything else."""
        if not self._recv.poll(timeout):
            self.kill()
            raise AssertionError(f"{self.name} was not ready within {timeout:.0f} s")
        sent = self._recv.recv()
        if sent != READY:
            self.kill()
            raise AssertionError(f"{self.name} sent {sent!r} before it was ready")

    def stop(self, timeout: float | None = None) -> dict:
        """Ask the loop to stop; its answer (kept: a second stop returns it again)."""
        timeout = self.STOP_TIMEOUT if timeout is None else timeout
        if self.result is None:
            self._stop.set()
            if not self._recv.poll(timeout):
                self._process.kill()
                raise AssertionError(f"{self.name} did not answer within {timeout:.0f} s of being stopped")
            self.result = self._recv.recv()
            self._process.join(30)
        return self.result

    def kill(self) -> None:
        if self._process.is_alive():
            self._process.kill()
            self._process.join(10)
