"""Run a function in a Python process of its own, with its own Kerberos environment.

librdkafka authenticates with GSSAPI through cyrus-sasl, which reads the process-wide ``KRB5_CONFIG`` and
``KRB5CCNAME``. Two identities (source and target, or admin and mirror) must not share a ticket cache,
so each identity's Kafka calls run in a process of their own whose environment names its own cache.
Our own process's environment is never changed (``env:`` secrets aside, which are out of it while a child
starts: see ``secure_mirror.profile.secrets.withheld_from_children``).

The processes are kept between calls, per environment (the few identities a command uses): starting a Python
process and importing confluent-kafka cost about a second of wall time and half a CPU-second per call, which a
pre-flight or a lag loop would otherwise pay on every request. A process that died (librdkafka aborts the process on
some errors) is replaced at the next call. Each call still builds its own Kafka client, so librdkafka runs its kinit
as before.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from secure_mirror.errors import SecureMirrorError
from secure_mirror.profile.secrets import withheld_from_children, withheld_names

T = TypeVar("T")
KEPT_ENVIRONMENTS = 8  # pools kept, the least recently used shut down beyond it
WORKERS_PER_ENVIRONMENT = 4  # calls for one identity from several threads at once (pre-flight's readers)
_POOLS: OrderedDict[tuple, ProcessPoolExecutor] = OrderedDict()
_POOLS_LOCK = threading.Lock()


class IsolatedCallError(SecureMirrorError):
    """A Kafka or Kerberos error raised in the isolated process, carried back as text.

    ``code`` is the librdkafka error name (e.g. ``TOPIC_AUTHORIZATION_FAILED``) when there is one."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code


def _error_code(exc: BaseException) -> str | None:
    for arg in getattr(exc, "args", ()):
        name = getattr(arg, "name", None)
        if callable(name):
            return name()
    return None


def _guarded(fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - library exceptions may not pickle; carry their text
        raise IsolatedCallError(f"{type(exc).__name__}: {exc}", _error_code(exc)) from None


def _apply_env(env: dict[str, str]) -> None:
    os.environ.update(env)


def _pool(key: tuple, env: dict[str, str]) -> ProcessPoolExecutor:
    with _POOLS_LOCK:
        for stale in [k for k in _POOLS if k[1] != key[1]]:  # started before this process learnt of a secret:
            _POOLS.pop(stale).shutdown(wait=False)  # their environment may hold it, so they go now
        pool = _POOLS.pop(key, None)
        if pool is None:
            with withheld_from_children():  # its queue's lock starts multiprocessing's resource tracker (a process)
                pool = ProcessPoolExecutor(
                    max_workers=WORKERS_PER_ENVIRONMENT,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_apply_env,
                    initargs=(env,),
                )
        _POOLS[key] = pool  # the most recently used last
        while len(_POOLS) > KEPT_ENVIRONMENTS:
            _key, oldest = _POOLS.popitem(last=False)
            oldest.shutdown(wait=False)
        return pool


def _forget(key: tuple, pool: ProcessPoolExecutor) -> None:
    with _POOLS_LOCK:
        if _POOLS.get(key) is pool:
            del _POOLS[key]
    pool.shutdown(wait=False)


def call_isolated(env: dict[str, str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a spawned process whose environment is ours (less ``env:`` secrets) plus ``env``;
    the process is kept for the next call with the same ``env`` (and the same secrets withheld)."""
    key = (tuple(sorted(env.items())), withheld_names())
    pool = _pool(key, env)
    try:
        try:
            with withheld_from_children():  # submit may start a worker
                future = pool.submit(_guarded, fn, args, kwargs)
        except RuntimeError:  # shut down meanwhile (another thread's call went beyond KEPT_ENVIRONMENTS): once more
            pool = _pool(key, env)
            with withheld_from_children():
                future = pool.submit(_guarded, fn, args, kwargs)
        return future.result()
    except BrokenProcessPool:  # the process died: the next call starts a new one
        _forget(key, pool)
        raise
