"""The TCP ports a process tree listens on, and which of them answer HTTP: for claims about what a process serves
(the job's driver serves no web page unless the profile turns Spark's UI on). The process tree, the sockets' inodes
and ``/proc/net/tcp`` are read by the benchmark's probes (benchmarks/harness/cpu.py, benchmarks/scale/probes.py)."""

from __future__ import annotations

import http.client

from benchmarks.harness import cpu
from benchmarks.scale import probes

LISTEN = "0A"


def process_tree(root: int) -> set[int]:
    """``root`` and every process below it."""
    return set(cpu.process_tree(root))


def listening_ports(pids: set[int]) -> set[int]:
    """The local ports of the listening TCP sockets the processes ``pids`` hold."""
    inodes = probes.socket_inodes(pids)
    return {port for port, state, inode in probes.tcp_sockets(local=True) if state == LISTEN and inode in inodes}


def answers_http(port: int, timeout: float = 3.0) -> bool:
    """Whether a ``GET /`` to ``127.0.0.1:port`` gets an HTTP status line back within ``timeout`` seconds."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", "/")
        connection.getresponse()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
