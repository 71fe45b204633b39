"""The sandbox's process helpers that read logs (secure_mirror/sandbox/procs.py)."""

from __future__ import annotations

from secure_mirror.sandbox import procs


def test_a_log_is_read_from_where_watching_began(tmp_path):
    path = tmp_path / "kdc.log"
    path.write_text("before\n")
    start = path.stat().st_size
    with open(path, "a") as fh:
        fh.write("during \xe9\n")
    assert procs.log_since(path, start) == "during \xe9\n"
    assert procs.log_since(path) == "before\nduring \xe9\n"
    assert procs.log_since(tmp_path / "missing.log", 0) == ""
