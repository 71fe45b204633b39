"""kafka/processes.py and identities/: the one process backend for an identity, in its three modes (kept, with a
deadline, replacing a dead process), and the secrets rule; real processes, no Kafka (the functions below are what
runs in them)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from secure_mirror.identities import Identities, IdentityFolder
from secure_mirror.kafka import processes
from secure_mirror.kafka.processes import (
    IdentityProcess,
    IsolatedCallError,
    KeptProcesses,
    ProcessEnded,
    ProcessTimeout,
    call_kept,
    kept_client,
)
from secure_mirror.profile.secrets import SecretRef, env_secrets


def whoami(name: str) -> tuple[int, str | None]:
    return os.getpid(), os.environ.get(name)


def die() -> None:
    os._exit(3)


def fail() -> None:
    raise ValueError("no such topic")


def sleep(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def counted(name: str, conf: dict) -> tuple[int, int]:
    """A client kept in the process: (its id, the process) stays the same between calls until an error."""
    return id(kept_client(name, conf, object)), os.getpid()


def secret_seen(name: str) -> str | None:
    return env_secrets().get(name)


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not Path(f"/proc/{pid}").exists()


# ---- kept ------------------------------------------------------------------------------------------------------
def test_an_environment_keeps_its_process_and_another_gets_its_own():
    first = call_kept({"SM_TEST_IDENTITY": "a"}, whoami, "SM_TEST_IDENTITY")
    again = call_kept({"SM_TEST_IDENTITY": "a"}, whoami, "SM_TEST_IDENTITY")
    other = call_kept({"SM_TEST_IDENTITY": "b"}, whoami, "SM_TEST_IDENTITY")
    assert first == again and first[1] == "a"
    assert other[1] == "b" and other[0] not in (first[0], os.getpid())


def test_a_kept_process_keeps_its_clients_until_an_error():
    kept = KeptProcesses({"SM_TEST_IDENTITY": "clients"})
    try:
        first = kept.call(counted, "admin", {"bootstrap.servers": "a:1"})
        assert kept.call(counted, "admin", {"bootstrap.servers": "a:1"}) == first
        assert kept.call(counted, "admin", {"bootstrap.servers": "b:1"})[0] != first[0]  # another conf, another client
        with pytest.raises(IsolatedCallError):
            kept.call(fail)
        again = kept.call(counted, "admin", {"bootstrap.servers": "a:1"})
        assert again[1] == first[1]  # the same process ...
        assert again[0] != first[0] or again == first  # ... with its clients made again (ids may be reused)
    finally:
        kept.close()


def test_calls_from_several_threads_get_processes_of_their_own_up_to_the_limit():
    kept = KeptProcesses({"SM_TEST_IDENTITY": "threads"}, most=2)
    pids: list[int] = []
    try:
        threads = [threading.Thread(target=lambda: pids.append(kept.call(sleep, 1.0))) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(pids) == 3 and len(set(pids)) == 2
    finally:
        kept.close()
    assert all(gone(pid) for pid in set(pids))


def test_beyond_the_kept_identities_the_oldest_process_goes(monkeypatch):
    monkeypatch.setattr(processes, "KEPT_IDENTITIES", 2)
    first, _ = call_kept({"SM_TEST_IDENTITY": "k1"}, whoami, "SM_TEST_IDENTITY")
    call_kept({"SM_TEST_IDENTITY": "k2"}, whoami, "SM_TEST_IDENTITY")
    call_kept({"SM_TEST_IDENTITY": "k3"}, whoami, "SM_TEST_IDENTITY")  # k1's is ended
    assert len(processes._KEPT) <= 2
    assert gone(first)
    assert call_kept({"SM_TEST_IDENTITY": "k1"}, whoami, "SM_TEST_IDENTITY")[0] != first


# ---- replacing a dead process ----------------------------------------------------------------------------------
def test_a_process_that_died_is_replaced_at_the_next_call():
    env = {"SM_TEST_IDENTITY": "dies"}
    before, _ = call_kept(env, whoami, "SM_TEST_IDENTITY")
    with pytest.raises(ProcessEnded, match="exit code 3"):
        call_kept(env, die)
    after, value = call_kept(env, whoami, "SM_TEST_IDENTITY")
    assert value == "dies" and after != before


def test_an_error_comes_back_as_text_and_the_process_stays():
    env = {"SM_TEST_IDENTITY": "errs"}
    before, _ = call_kept(env, whoami, "SM_TEST_IDENTITY")
    with pytest.raises(IsolatedCallError, match="ValueError: no such topic"):
        call_kept(env, fail)
    assert call_kept(env, whoami, "SM_TEST_IDENTITY")[0] == before


# ---- a deadline ------------------------------------------------------------------------------------------------
def test_a_process_that_does_not_answer_by_its_deadline_is_killed():
    process = IdentityProcess({"SM_TEST_IDENTITY": "slow"})
    try:
        pid = process.call(whoami, "SM_TEST_IDENTITY")[0]
        process.submit(sleep, 30)
        started = time.monotonic()
        with pytest.raises(ProcessTimeout, match="no answer within 0.5s"):
            process.result(0.5)
        assert time.monotonic() - started < 10 and gone(pid)
    finally:
        process.close()


def test_an_answer_before_the_deadline_is_returned():
    process = IdentityProcess({"SM_TEST_IDENTITY": "quick"})
    try:
        process.submit(whoami, "SM_TEST_IDENTITY")
        assert process.result(20)[1] == "quick"
    finally:
        process.close()


# ---- secrets ---------------------------------------------------------------------------------------------------
def test_a_secret_learnt_after_a_process_started_is_not_in_the_next_ones_environment(monkeypatch):
    env = {"SM_TEST_IDENTITY": "secret"}
    monkeypatch.setenv("SM_TEST_LATE_SECRET", "s3cr3t")
    before, seen = call_kept(env, whoami, "SM_TEST_LATE_SECRET")
    assert seen == "s3cr3t"  # not yet a secret of this process: inherited like any variable
    assert SecretRef.parse("env:SM_TEST_LATE_SECRET").resolve() == "s3cr3t"  # now it is one
    after, seen = call_kept(env, whoami, "SM_TEST_LATE_SECRET")
    assert seen is None and after != before
    assert gone(before)  # and the process whose environment held it is gone, not kept


def test_a_secret_reaches_the_process_through_its_pipe_not_its_environment(monkeypatch):
    monkeypatch.setenv("SM_TEST_PIPED_SECRET", "p1p3d")
    assert SecretRef.parse("env:SM_TEST_PIPED_SECRET").resolve() == "p1p3d"
    process = IdentityProcess({"SM_TEST_IDENTITY": "piped"})
    try:
        pid, inherited = process.call(whoami, "SM_TEST_PIPED_SECRET")
        assert inherited is None and process.call(secret_seen, "SM_TEST_PIPED_SECRET") == "p1p3d"
        assert b"p1p3d" not in Path(f"/proc/{pid}/environ").read_bytes()
        assert b"p1p3d" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    finally:
        process.close()


# ---- the folder ------------------------------------------------------------------------------------------------
def test_an_identity_folder_is_private_writes_krb5_conf_once_and_gives_each_identity_its_cache(tmp_path):
    written: list[Path] = []

    def krb5(folder: Path) -> str:
        written.append(folder / "krb5.conf")
        written[-1].write_text("[libdefaults]\n")
        return str(written[-1])

    folder = IdentityFolder(krb5)
    try:
        assert stat.S_IMODE(folder.path.stat().st_mode) == 0o700 and written == [folder.path / "krb5.conf"]
        source, target = folder.env("source", "mirror"), folder.env("target", "admin")
        assert source["KRB5_CONFIG"] == target["KRB5_CONFIG"] == str(written[0])
        assert source["KRB5CCNAME"] != target["KRB5CCNAME"]
        assert all(env["KRB5CCNAME"].startswith(f"FILE:{folder.path}/") for env in (source, target))
    finally:
        folder.remove()
    assert not folder.path.exists()
    kept = IdentityFolder(lambda _f: None, path=tmp_path / "kept")  # a given folder is made private and kept
    kept.remove()
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o700


def test_identities_close_ends_every_process_and_removes_the_folder():
    folder = IdentityFolder(lambda _f: None)
    identities = Identities(folder, {})
    deadline_process = identities.process("source", "admin")
    pid = deadline_process.call(whoami, "KRB5CCNAME")[0]
    identities.close()
    assert gone(pid) and not folder.path.exists()


def test_a_folder_whose_owner_is_gone_is_removed_by_the_next_one(tmp_path):
    """A command killed with SIGKILL leaves its identity folder (credential caches in it); the next folder of the
    same prefix removes it, and only such folders: not a live owner's, not one without an owner, not another
    prefix's."""
    from secure_mirror.identities import folder as folders_

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    made = {}
    for name, mark in {
        "sm-t-gone": f"{child.pid}",
        "sm-t-reused": f"{os.getpid()} 1",  # this pid, another start time: another process
        "sm-t-alive": folders_.process_mark(os.getpid()),
        "other-gone": f"{child.pid}",
    }.items():
        made[name] = tmp_path / name
        made[name].mkdir()
        (made[name] / folders_.OWNER).write_text(mark)
        (made[name] / "target-admin.ccache").write_text("ticket")
    (tmp_path / "sm-t-unmarked").mkdir()
    removed = folders_.sweep(tmp_path, "sm-t-")
    assert sorted(p.name for p in removed) == ["sm-t-gone", "sm-t-reused"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other-gone", "sm-t-alive", "sm-t-unmarked"]
    folder = IdentityFolder(lambda _f: None)
    try:
        assert folders_.owner_alive((folder.path / folders_.OWNER).read_text())
    finally:
        folder.remove()


def test_a_forgotten_client_is_made_anew_and_the_others_are_kept():
    from secure_mirror.kafka.processes import forget_client

    made: list[object] = []

    def make() -> object:
        made.append(object())
        return made[-1]

    conf = {"bootstrap.servers": "b:9093", "sasl.kerberos.principal": "mirror"}
    first, other = kept_client("checkpoints", conf, make), kept_client("map", conf, make)
    assert kept_client("checkpoints", conf, make) is first  # kept between calls
    forget_client("checkpoints", conf)
    assert kept_client("checkpoints", conf, make) is not first and kept_client("map", conf, make) is other
    forget_client("checkpoints", conf)
    forget_client("map", conf)
    forget_client("never made", conf)  # nothing to forget: no error
