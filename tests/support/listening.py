"""The TCP ports a process tree listens on, and which of them answer HTTP: for claims about what a process serves
(the job's driver serves no web page unless the profile turns Spark's UI on). Read from /proc: each process's
socket inodes (``/proc/<pid>/fd``) matched with the LISTEN rows of ``/proc/net/tcp`` and ``tcp6``."""

from __future__ import annotations

import http.client
import os
from pathlib import Path

LISTEN = "0A"


def process_tree(root: int) -> set[int]:
    """``root`` and every process below it (by the parent id in ``/proc/<pid>/stat``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(text[text.rindex(")") + 2 :].split()[1])
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [child for child, parent in parents.items() if parent == pid and child not in tree]
    return tree


def listening_ports(pids: set[int]) -> set[int]:
    """The local ports of the listening TCP sockets the processes ``pids`` hold."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
        except OSError:
            continue
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == LISTEN and int(fields[9]) in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


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
