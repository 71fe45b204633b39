"""Heartbeats as pure decisions: when the driver beats, how lag and verify judge the newest one, where the reader
starts, and the monitor's status text (the bytes against Kafka's own class: test_heartbeats_jvm.py)."""

from __future__ import annotations

import pytest

from secure_mirror.run import heartbeats
from secure_mirror.run.heartbeat_reader import read_start
from secure_mirror.run.heartbeat_writer import settings_of
from secure_mirror.run.heartbeats import Heartbeat, HeartbeatState, beat_due
from secure_mirror.run.status_lines import with_heartbeat


def test_the_format_is_two_kafka_strings_and_a_versioned_timestamp():
    key, value = heartbeats.encode(Heartbeat("src", "tgt", 258))
    assert key == b"\x00\x03src\x00\x03tgt"
    assert value == b"\x00\x00" + (258).to_bytes(8, "big")


def test_newest_passes_over_other_flows_and_other_formats():
    mine = heartbeats.encode(Heartbeat("a", "b", 5))
    newer_other = heartbeats.encode(Heartbeat("c", "b", 9))
    records = [mine, newer_other, (b"junk", b"x"), (None, None), heartbeats.encode(Heartbeat("a", "b", 3))]
    assert heartbeats.newest(records, "a", "b") == 5
    assert heartbeats.newest(records, "x", "y") is None


@pytest.mark.parametrize(
    ("now", "last", "alive", "due"),
    [
        (10.0, None, 9.0, True),  # the first beat once the query proved alive
        (10.0, None, None, False),  # never proved alive: no beat
        (10.0, 9.5, 10.0, False),  # within the interval
        (10.0, 9.0, 10.0, True),
        (100.0, 50.0, 39.0, False),  # one trigger has run for more than stale_after: stuck, no beat
        (100.0, 50.0, 41.0, True),
    ],
)
def test_a_beat_is_due_after_the_interval_while_the_query_is_alive(now, last, alive, due):
    assert beat_due(now, last, 1.0, alive, 60.0) is due


def test_heartbeats_off_never_beat():
    assert beat_due(10.0, None, 0, 10.0, 60.0) is False


def test_a_stale_or_missing_heartbeat_is_flagged_with_its_age():
    fresh = HeartbeatState("a", "b", 1_000, 31_000, 60)
    assert not fresh.stale and fresh.text() == "heartbeat: a->b alive, newest 30 s ago"
    old = HeartbeatState("a", "b", 1_000, 71_000, 60)
    assert old.stale and old.text().startswith("heartbeat: STALE: the newest heartbeat of a->b is 70 s old")
    none = HeartbeatState("a", "b", None, 71_000, 60)
    assert none.stale and none.age_ms is None and "no heartbeat of a->b" in none.text()
    unknown = HeartbeatState("a", "b", None, 71_000, 60, problem="TOPIC_AUTHORIZATION_FAILED")
    assert unknown.stale and unknown.to_dict()["problem"] == "TOPIC_AUTHORIZATION_FAILED"
    assert unknown.text().startswith("heartbeat: UNKNOWN")


@pytest.mark.parametrize(
    ("low", "high", "by_time", "start"),
    [
        (0, 10, -1, 0),  # few records: all of them
        (0, 5000, -1, 3000),  # nothing newer than the threshold: the last LOOKBACK, for the age
        (0, 5000, 100, 100),  # many newer than the threshold: every one of them
        (0, 5000, 4500, 3000),
        (4000, 5000, 100, 4000),  # never before the log start
    ],
)
def test_the_reader_reads_every_fresh_record_and_the_last_ones(low, high, by_time, start):
    assert read_start(low, high, by_time) == start


def test_the_writer_takes_its_settings_from_the_sink_options():
    options = {
        "mirror.heartbeats-interval-seconds": "2",
        "mirror.heartbeats-stale-after-seconds": "30",
        "mirror.heartbeats-aliases": '["src","tgt"]',
    }
    assert settings_of(options) == (2.0, 30.0, "src", "tgt")
    assert settings_of({**options, "mirror.heartbeats-interval-seconds": "0"}) is None
    assert settings_of({}) is None  # options rendered before heartbeats: off


def test_the_status_line_shows_the_heartbeats_age_when_they_are_on():
    assert with_heartbeat("batch 3: 5 records", {"heartbeat-age-ms": 1400}) == "batch 3: 5 records, heartbeat 1 s ago"
    assert with_heartbeat("batch 3", {"heartbeat-age-ms": None}) == "batch 3, no heartbeat yet"
    assert with_heartbeat("batch 3", {}) == "batch 3"
