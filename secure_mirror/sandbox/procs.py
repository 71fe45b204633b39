"""Small helpers for the sandbox's server processes: free ports, readiness waits, log tails, pid stops."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.kafka.processes import pid_alive


def free_ports(count: int) -> list[int]:
    """Ports that are free on 127.0.0.1 right now (the OS picks them; they stay free unless raced)."""
    socks, ports = [], []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def tcp_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def log_since(path: Path, offset: int = 0) -> str:
    """A log's text from byte ``offset`` (its size when a test began watching it) to its end; empty when unreadable."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read().decode(errors="replace")
    except OSError:
        return ""


def log_tail(path: Path, lines: int = 30, errors: int = 10) -> str:
    """A log's last ``lines``, after its last ``errors`` lines at ERROR or FATAL when those are earlier: a server's
    shutdown after a fatal error fills its tail with the shutdown, the cause is above it."""
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log written)"
    tail = text[-lines:]
    earlier = [line for line in text[:-lines] if " ERROR " in line or " FATAL " in line][-errors:]
    return "\n".join([*earlier, "...", *tail] if earlier else tail)


def wait_until(
    ready: Callable[[], bool],
    *,
    what: str,
    timeout: float,
    proc: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Poll ``ready`` until true; fail with the server's log tail if it dies or the timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if proc is not None and proc.poll() is not None:
            raise EnvironmentNotReady(
                f"{what} exited with code {proc.returncode} before it was ready; "
                f"last lines of {log}:\n{log_tail(log) if log else ''}"
            )
        time.sleep(0.2)
    raise EnvironmentNotReady(
        f"{what} was not ready after {timeout:.0f}s; last lines of {log}:\n{log_tail(log) if log else ''}"
    )


SERVER_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR")  # what a sandbox server keeps of our environment


def inherited_env(*extra: str) -> dict[str, str]:
    """The variables of ours a sandbox server gets: ``SERVER_ENV`` and ``extra``, nothing else (no secret)."""
    return {name: os.environ[name] for name in (*SERVER_ENV, *extra) if name in os.environ}


def start(argv: list[str], *, env: dict[str, str], log: Path, cwd: Path | None = None) -> subprocess.Popen:
    """Start a server in its own process group, stdout and stderr appended to ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def pid_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def stop_pid(pid: int, *, expect_in_cmdline: str, timeout: float = 20.0) -> None:
    """SIGTERM the process group we started (only if its command line is still ours), then SIGKILL."""
    if not pid_alive(pid) or expect_in_cmdline not in pid_cmdline(pid):
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _running(pid):
                return
            time.sleep(0.1)


def _running(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def kill_pid(pid: int, *, expect_in_cmdline: str) -> None:
    """SIGKILL the process group we started (a crash, as a test would cause it)."""
    if pid_alive(pid) and expect_in_cmdline in pid_cmdline(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
