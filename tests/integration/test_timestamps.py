"""Mirrored records keep their source timestamps (the mirror's sink writes them natively; Spark's Kafka sink
could not), and headers stay as they were."""

from __future__ import annotations

import time

import pytest

from secure_mirror.kafka import admin_ops
from secure_mirror.run.launcher import run_mirror
from tests.support.cluster import consume_to_end, granted_both, topic_mirror, unique

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]


def test_target_records_keep_source_timestamps_and_headers(sandbox, tmp_path):
    topic = unique("demo.ts")
    profile, acls = topic_mirror(sandbox, tmp_path, topic)
    hour_ago = int(time.time() * 1000) - 3_600_000  # well in the past, well inside the topic's retention
    sent = [
        {
            "key": f"k{i}".encode(),
            "value": None if i == 3 else b"v",
            "timestamp": hour_ago + i * 1000,
            "headers": [("h", b"x"), ("h", str(i).encode())],
        }
        for i in range(6)
    ]
    sandbox.admin("source", admin_ops.create_topics, {topic: 2})
    sandbox.admin("source", admin_ops.produce, topic, sent)
    with granted_both(sandbox, acls):
        assert run_mirror(profile, until_caught_up=True, skip_preflight=True, run_dir=str(tmp_path / "run")) == 0
        got = sandbox.as_mirror(  # to the end, so that a record more is seen
            "target", consume_to_end, profile.target_topic(topic), group_id="secure-mirror-src-tgt-ts"
        )
    by_key = {r["key"]: r for r in got}
    assert len(got) == len(by_key) == len(sent), [r["key"] for r in got]
    assert {k: r["timestamp"] for k, r in by_key.items()} == {s["key"]: s["timestamp"] for s in sent}
    assert {k: r["headers"] for k, r in by_key.items()} == {s["key"]: s["headers"] for s in sent}
    assert by_key[b"k3"]["value"] is None
