"""Lag rows and the checkpoint reader (offsets log, commits, initial offsets, fingerprint)."""

from __future__ import annotations

import json

import pytest

from secure_mirror.errors import BadInputError
from secure_mirror.profile.job_settings import FINGERPRINT_FILE, fingerprint
from secure_mirror.run import checkpoint
from secure_mirror.run.lag import format_table, lag_rows
from tests.support import profiles as pf


def _write_checkpoint(folder, batches: dict[int, dict], committed: list[int]):
    (folder / "offsets").mkdir(parents=True)
    (folder / "commits").mkdir()
    for batch, offsets in batches.items():
        (folder / "offsets" / str(batch)).write_text('v1\n{"batchWatermarkMs":0}\n' + json.dumps(offsets))
    for batch in committed:
        (folder / "commits" / str(batch)).write_text("v1\n{}")
    (folder / "sources" / "0").mkdir(parents=True)
    (folder / "sources" / "0" / "0").write_text("\x00v1\n" + json.dumps({"t": {"0": 3}}))


def test_committed_offsets_are_those_of_the_newest_committed_batch(tmp_path):
    _write_checkpoint(tmp_path, {0: {"t": {"0": 5}}, 1: {"t": {"0": 9, "1": 4}}, 2: {"t": {"0": 12}}}, [0, 1])
    assert checkpoint.committed_offsets(str(tmp_path)) == (1, {("t", 0): 9, ("t", 1): 4})
    assert checkpoint.initial_offsets(f"file://{tmp_path}") == {("t", 0): 3}
    assert checkpoint.committed_offsets(str(tmp_path / "none")) is None


def test_lag_rows_and_table(tmp_path):
    profile = pf.load(tmp_path)
    rows = lag_rows(profile, {("t", 0): (0, 12), ("t", 1): (0, 4), ("u", 0): (2, 9)}, {("t", 0): 9, ("t", 1): 4})
    assert [(r.topic, r.partition, r.offset, r.log_end, r.lag) for r in rows] == [
        ("t", 0, 9, 12, 3),
        ("t", 1, 4, 4, 0),
        ("u", 0, None, 9, 7),
    ]
    table = format_table(rows).splitlines()
    assert table[0].split() == ["Group", "Topic", "Partition", "Offset", "LogEnd", "Lag"]
    assert table[3].split() == ["secure-mirror-src-tgt", "u", "0", "-", "9", "7"]
    assert table[-1] == "total lag: 10 records over 3 partitions"


def test_a_topic_the_source_no_longer_shows_has_unknown_lag_not_zero(tmp_path):
    profile = pf.load(tmp_path)
    rows = lag_rows(profile, {("t", 0): (0, 12)}, {("t", 0): 9, ("gone", 0): 40})
    assert [(r.topic, r.offset, r.log_end, r.lag) for r in rows] == [("gone", 40, None, None), ("t", 9, 12, 3)]
    table = format_table(rows).splitlines()
    assert table[1].split() == ["secure-mirror-src-tgt", "gone", "0", "40", "?", "?"]
    assert table[-2] == "total lag: 3 records over 1 partitions"
    assert table[-1].startswith("unknown: gone no longer shown by the source (deleted, or the mirror identity")


def test_checkpoint_of_other_settings_is_refused(tmp_path):
    old = {"rename_rule": "alias_prefix", "topics_include": "a.*"}
    (tmp_path / FINGERPRINT_FILE).write_text(json.dumps({"sha256": fingerprint(old), "settings": old}))
    checkpoint.check_fingerprint(str(tmp_path), {"sha256": fingerprint(old), "settings": old})
    new = {**old, "rename_rule": "identity"}
    with pytest.raises(
        BadInputError,
        match=r"other topic or rename settings \(rename_rule: 'alias_prefix' -> "
        r"'identity'\)",
    ):
        checkpoint.check_fingerprint(str(tmp_path), {"sha256": fingerprint(new), "settings": new})
    checkpoint.check_fingerprint("hdfs://nn/ckpt", {"sha256": "x", "settings": {}})  # the job checks those


def test_a_partition_whose_end_offset_could_not_be_read_has_no_lag_and_is_named(tmp_path):
    """A broker down: the partition's lag is unknown (None), never 0, and the table says which and why."""
    profile = pf.load(tmp_path)
    why = "its leader, broker 2, did not answer (KafkaError{code=_TIMED_OUT})"
    rows = lag_rows(profile, {("t", 0): (0, 12)}, {("t", 0): 12, ("t", 1): 4}, {("t", 1): why})
    assert [(r.partition, r.offset, r.log_end, r.lag, r.unread) for r in rows] == [
        (0, 12, 12, 0, None),
        (1, 4, None, None, why),
    ]
    table = format_table(rows)
    assert "total lag: 0 records over 1 partitions" in table
    assert f"unread: 1 partition(s) whose lag is unknown, not 0: t[1]: {why}" in table
    assert "no longer shown by the source" not in table  # it is shown: its leader is down
