"""Run a function in a fresh Python process with its own Kerberos environment.

librdkafka authenticates with GSSAPI through cyrus-sasl, which reads the process-wide ``KRB5_CONFIG`` and
``KRB5CCNAME``. Two identities (source and target, or admin and mirror) must not share a ticket cache,
so each identity's Kafka calls run in a process of their own whose environment names its own cache.
Our own process's environment is never changed (``env:`` secrets aside, which are out of it while a child
starts: see ``secure_mirror.profile.secrets.withheld_from_children``).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from secure_mirror.errors import SecureMirrorError
from secure_mirror.profile.secrets import withheld_from_children

T = TypeVar("T")


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


def call_isolated(env: dict[str, str], fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a spawned process whose environment is ours (less ``env:`` secrets) plus ``env``."""
    ctx = multiprocessing.get_context("spawn")
    with withheld_from_children():  # the pool may start multiprocessing's resource tracker; submit starts the worker
        pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_apply_env, initargs=(env,))
        future = pool.submit(_guarded, fn, args, kwargs)
    with pool:
        return future.result()
