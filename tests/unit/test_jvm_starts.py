"""The tests' class-data archives (tests/support/jvm_starts.py): a new dump removes the older ones beside it, not a dump
another test session may still be finishing."""

from __future__ import annotations

import os
import time

from tests.support import jvm_starts


def test_a_new_archive_removes_older_archives_and_left_dumps_but_not_a_dump_in_progress(tmp_path):
    archive = tmp_path / "spark-new.jsa"
    older, left, dumping = tmp_path / "spark-old.jsa", tmp_path / "spark-x.1.partial", tmp_path / "spark-y.2.partial"
    other = tmp_path / "notes.txt"
    for path in (archive, older, left, dumping, other):
        path.write_bytes(b"x")
    long_ago = time.time() - jvm_starts.ARCHIVE_TIMEOUT - 60
    os.utime(left, (long_ago, long_ago))

    jvm_starts._remove_others(archive)

    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "spark-new.jsa", "spark-y.2.partial"]
