"""The sandbox's process helpers that read logs (secure_mirror/sandbox/procs.py)."""

from __future__ import annotations

from pathlib import Path

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


def test_a_logs_tail_brings_the_errors_above_it():
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "server.log"
        lines = [
            "[t] INFO starting",
            "[t] ERROR Exiting Kafka due to fatal exception",
            *[f"[t] INFO stop {i}" for i in range(40)],
        ]
        path.write_text("\n".join(lines) + "\n")
        shown = procs.log_tail(path).splitlines()
        assert shown[0] == "[t] ERROR Exiting Kafka due to fatal exception" and shown[1] == "..."
        assert shown[2:] == lines[-30:]
        path.write_text("\n".join(lines[2:]) + "\n")
        assert procs.log_tail(path).splitlines() == lines[-30:]
