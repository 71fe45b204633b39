"""kafka/isolated.py: each environment's calls run in processes of their own, kept between calls; a process that died
is replaced; a secret this process learns of later is not in a kept process's environment (real processes, no
Kafka: the functions below are what runs in them)."""

from __future__ import annotations

import os
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from secure_mirror.kafka import isolated
from secure_mirror.kafka.isolated import IsolatedCallError, call_isolated
from secure_mirror.profile.secrets import SecretRef


def whoami(name: str) -> tuple[int, str | None]:
    return os.getpid(), os.environ.get(name)


def die() -> None:
    os._exit(3)


def fail() -> None:
    raise ValueError("no such topic")


def test_an_environment_keeps_its_process_and_another_gets_its_own():
    first = call_isolated({"SM_TEST_IDENTITY": "a"}, whoami, "SM_TEST_IDENTITY")
    again = call_isolated({"SM_TEST_IDENTITY": "a"}, whoami, "SM_TEST_IDENTITY")
    other = call_isolated({"SM_TEST_IDENTITY": "b"}, whoami, "SM_TEST_IDENTITY")
    assert first == again and first[1] == "a"
    assert other[1] == "b" and other[0] not in (first[0], os.getpid())


def test_a_process_that_died_is_replaced_at_the_next_call():
    env = {"SM_TEST_IDENTITY": "dies"}
    before, _ = call_isolated(env, whoami, "SM_TEST_IDENTITY")
    with pytest.raises(BrokenProcessPool):
        call_isolated(env, die)
    after, value = call_isolated(env, whoami, "SM_TEST_IDENTITY")
    assert value == "dies" and after != before


def test_an_error_comes_back_as_text_and_the_process_stays():
    env = {"SM_TEST_IDENTITY": "errs"}
    before, _ = call_isolated(env, whoami, "SM_TEST_IDENTITY")
    with pytest.raises(IsolatedCallError, match="ValueError: no such topic"):
        call_isolated(env, fail)
    assert call_isolated(env, whoami, "SM_TEST_IDENTITY")[0] == before


def test_a_secret_learnt_after_a_process_started_is_not_in_the_next_ones_environment(monkeypatch):
    env = {"SM_TEST_IDENTITY": "secret"}
    monkeypatch.setenv("SM_TEST_LATE_SECRET", "s3cr3t")
    before, seen = call_isolated(env, whoami, "SM_TEST_LATE_SECRET")
    assert seen == "s3cr3t"  # not yet a secret of this process: inherited like any variable
    assert SecretRef.parse("env:SM_TEST_LATE_SECRET").resolve() == "s3cr3t"  # now it is one
    after, seen = call_isolated(env, whoami, "SM_TEST_LATE_SECRET")
    assert seen is None and after != before
    deadline = time.monotonic() + 10  # and the process whose environment held it is gone, not kept
    while Path(f"/proc/{before}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{before}").exists()


def test_beyond_the_kept_environments_the_oldest_process_goes(monkeypatch):
    monkeypatch.setattr(isolated, "KEPT_ENVIRONMENTS", 2)
    first, _ = call_isolated({"SM_TEST_IDENTITY": "k1"}, whoami, "SM_TEST_IDENTITY")
    call_isolated({"SM_TEST_IDENTITY": "k2"}, whoami, "SM_TEST_IDENTITY")
    call_isolated({"SM_TEST_IDENTITY": "k3"}, whoami, "SM_TEST_IDENTITY")  # k1's is shut down
    assert len(isolated._POOLS) <= 2
    assert call_isolated({"SM_TEST_IDENTITY": "k1"}, whoami, "SM_TEST_IDENTITY")[0] != first
