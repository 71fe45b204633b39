"""One process per Kafka identity: the one place where a process acting as an identity is started.

librdkafka (through cyrus-sasl) and MIT krb5 read ``KRB5_CONFIG`` and ``KRB5CCNAME`` from the process environment,
so two identities (source and target, admin and mirror) never share a process: each identity's calls run in a
spawned process of its own whose environment names its krb5.conf and its own credential cache. Our own process's
environment is never changed. The security rules of such a process live here and nowhere else:

- it is started with every ``env:`` secret this process knows out of the environment it inherits
  (``withheld_from_children``); the secrets a call may resolve come through its pipe (``adopt``), never through its
  environment or its argument list;
- a process started before this process learnt of a secret has that secret in its environment, so it is ``stale``
  and is ended instead of being used again.

Three ways to use it:

- **kept**: :class:`KeptProcesses` keeps up to a few processes of one identity between calls (starting Python and
  importing confluent-kafka cost about a second and half a CPU-second a call), and a call's function may keep its
  clients in the process (:func:`kept_client`) until an error;
- **with a deadline**: :meth:`IdentityProcess.result` with a timeout kills a process that does not answer in time
  (pre-flight never hangs);
- **replacing a dead process**: librdkafka ends the process on some errors; the call says so
  (:class:`ProcessEnded`) and the next one starts a new process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from secure_mirror.errors import SecureMirrorError
from secure_mirror.profile.secrets import adopt, env_secrets, withheld_from_children, withheld_names

T = TypeVar("T")
PROCESSES_PER_IDENTITY = 4  # calls for one identity from several threads at once (verify reads both sides at once)
KEPT_IDENTITIES = 8  # identities whose processes the module-wide registry keeps (:func:`call_kept`)


class ProcessError(SecureMirrorError):
    """A call in an identity's process did not give an answer."""


class IsolatedCallError(ProcessError):
    """A Kafka or Kerberos error raised in the identity's process, carried back as text.

    ``code`` is the librdkafka error name (e.g. ``TOPIC_AUTHORIZATION_FAILED``) when there is one."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code


class ProcessEnded(ProcessError):
    """The process ended during the call (librdkafka aborts on some errors); the next call starts a new one."""


class ProcessTimeout(ProcessError):
    """No answer before the deadline; the process was killed."""


# ---- in the identity's process ---------------------------------------------------------------------------------
_CLIENTS: dict[tuple, Any] = {}  # clients kept between calls (kept_client), dropped after any error


def _client_key(name: str, conf: dict[str, Any]) -> tuple:
    return (name, tuple(sorted((k, v) for k, v in conf.items() if isinstance(v, (str, int, float, bool)))))


def kept_client(name: str, conf: dict[str, Any], make: Callable[[], T]) -> T:
    """In an identity's process: the client ``name`` for ``conf``, made once and kept for the next calls (an error
    in any call drops them all, so the next call starts with new clients)."""
    key = _client_key(name, conf)
    if key not in _CLIENTS:
        _CLIENTS[key] = make()
    return _CLIENTS[key]


def forget_client(name: str, conf: dict[str, Any]) -> None:
    """The next :func:`kept_client` call for ``name`` and ``conf`` makes a new client (the kept one is dropped)."""
    _CLIENTS.pop(_client_key(name, conf), None)


def error_code(exc: BaseException) -> str | None:
    """The librdkafka error name a confluent-kafka exception carries (``KafkaError.name()``), if any."""
    code = getattr(exc, "code", None)
    if isinstance(code, str):  # ours, raised in the process (run/groups/reading.py)
        return code
    for arg in getattr(exc, "args", ()):
        name = getattr(arg, "name", None)
        if callable(name):
            return name()
    return None


def _serve(env: dict[str, str], conn, secrets: dict[str, str]) -> None:
    os.environ.update(env)  # the identity's environment, set before any Kerberos library is loaded
    adopt(secrets)  # env: secrets come through the pipe, so that no process inherits them
    # a process that builds tens of thousands of objects per call (a future and a description per topic): collecting
    # cycles every 700 allocations cost a third of describing 10,000 topics; every 50,000 is plenty
    gc.set_threshold(50_000, 20, 20)
    while True:
        try:
            job = conn.recv()
        except EOFError:  # our parent is gone
            _leave()
        if job is None:
            _leave()
        fn, args, kwargs = job
        try:
            conn.send((True, fn(*args, **kwargs)))
        except Exception as exc:  # noqa: BLE001 - library exceptions may not pickle; carry their text and code
            _CLIENTS.clear()
            conn.send((False, (f"{type(exc).__name__}: {exc}", error_code(exc))))


def _leave() -> NoReturn:
    """End at once, the kept Kafka clients unclosed: closing a librdkafka client can wait a second for its broker
    threads, and nothing of theirs needs a goodbye (no record is left unflushed: each call flushes what it
    produces): the operating system closes their connections."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# ---- in our process --------------------------------------------------------------------------------------------
class IdentityProcess:
    """One spawned process acting as one identity (``env``: its Kerberos environment); one call at a time:
    ``submit`` then ``result``, or ``call``."""

    def __init__(self, env: dict[str, str]):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(env, child, env_secrets()), daemon=True)
        with withheld_from_children():
            self.withheld = withheld_names()  # what its environment lacks
            self.proc.start()
        child.close()
        self.released = False

    @property
    def stale(self) -> bool:
        """Started before this process learnt of a secret: its environment holds it, so it must not be used."""
        return withheld_names() != self.withheld

    @property
    def alive(self) -> bool:
        return not self.released and self.proc.is_alive()

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        try:
            self.conn.send((fn, args, kwargs))
        except OSError:  # (BrokenPipeError) it has ended
            raise ProcessEnded(self._ended()) from None

    def result(self, timeout: float | None = None) -> Any:
        """The answer to the call submitted; with ``timeout``, a process that does not answer in time is killed."""
        if timeout is not None and not self.conn.poll(timeout):
            self.kill()
            raise ProcessTimeout(f"no answer within {timeout:g}s")
        try:
            ok, value = self.conn.recv()
        except (EOFError, OSError):
            raise ProcessEnded(self._ended()) from None
        if not ok:
            raise IsolatedCallError(*value)
        return value

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        self.submit(fn, *args, **kwargs)
        return self.result()

    def _ended(self) -> str:
        self.proc.join(1)
        return f"the identity's process ended (exit code {self.proc.exitcode})"

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)

    def release(self) -> None:
        """Tell the process it has no more work: it ends while the caller goes on; ``close`` then reaps it."""
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


class KeptProcesses:
    """The kept processes of one identity: a call takes an idle one, or starts one while fewer than ``most`` run;
    one that ended or is stale is dropped. After :meth:`close` nothing is kept: a call still made gets a process of
    its own, ended after it."""

    def __init__(self, env: dict[str, str], most: int = PROCESSES_PER_IDENTITY):
        self.env, self.most = env, most
        self._idle: list[IdentityProcess] = []
        self._running = 0
        self._closed = False
        self._changed = threading.Condition()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in one of the identity's processes."""
        process = self._take()
        answered = False
        try:
            value = process.call(fn, *args, **kwargs)
            answered = True
            return value
        except IsolatedCallError:  # an answer all the same: the process is fine
            answered = True
            raise
        finally:
            self._give(process, keep=answered)

    def _take(self) -> IdentityProcess:
        ended: list[IdentityProcess] = []  # closed outside the lock: a close may wait for its process
        try:
            with self._changed:
                while True:
                    while self._idle:
                        process = self._idle.pop()
                        if process.alive and not process.stale:
                            return process
                        self._running -= 1
                        ended.append(process)
                    if self._closed or self._running < self.most:
                        self._running += 1
                        break
                    self._changed.wait()
        finally:
            for process in ended:
                process.close()
        try:
            return IdentityProcess(self.env)
        except BaseException:
            self._give(None, keep=False)
            raise

    def _give(self, process: IdentityProcess | None, *, keep: bool) -> None:
        with self._changed:
            if keep and process is not None and not self._closed and process.alive:
                self._idle.append(process)
                process = None
            else:
                self._running -= 1
            self._changed.notify()
        if process is not None:
            process.close()

    def close_stale(self) -> None:
        with self._changed:
            stale = [p for p in self._idle if p.stale or not p.alive]
            self._idle = [p for p in self._idle if p not in stale]
            self._running -= len(stale)
        for process in stale:
            process.close()

    def close(self) -> None:
        with self._changed:
            self._closed, idle, self._idle = True, self._idle, []
            self._running -= len(idle)
        for process in idle:
            process.release()
        for process in idle:
            process.close()


_KEPT: OrderedDict[tuple, KeptProcesses] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def call_kept(env: dict[str, str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a kept process of the identity whose environment is ``env``, for callers that keep
    no :class:`KeptProcesses` of their own (the sandbox, tests): the processes of the last few identities are kept;
    those started before this process learnt of a secret are ended at once."""
    key = tuple(sorted(env.items()))
    with _KEPT_LOCK:
        kept = _KEPT.pop(key, None) or KeptProcesses(env)
        _KEPT[key] = kept  # the most recently used last
        evicted = [_KEPT.popitem(last=False)[1] for _ in range(len(_KEPT) - KEPT_IDENTITIES)]
        others = list(_KEPT.values())
    for old in evicted:
        old.close()
    for each in others:  # their environment may hold a secret learnt since: they go now
        each.close_stale()
    return kept.call(fn, *args, **kwargs)


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts: it exists, signals are merely refused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
