"""Mirrored records keep their source timestamps (the mirror's sink writes them natively; Spark's Kafka sink
could not), and headers stay as they were."""

from __future__ import annotations

import json
import time

import pytest
import yaml

from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.run.launcher import run_mirror
from tests.support.cluster import consume_to_end, unique

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]


def test_target_records_keep_source_timestamps_and_headers(sandbox, tmp_path):
    topic = unique("demo.ts")
    data = yaml.safe_load(sandbox.profile_path.read_text())
    data["mirror"]["topics"] = {"include": topic.replace(".", "\\.")}
    data["mirror"]["checkpoint_location"] = str(tmp_path / "checkpoints")
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(data))
    profile = load_profile(path)
    render_all(profile, tmp_path / "out")
    acls = {
        side: json.loads((tmp_path / "out" / "acls" / f"{side}.acls.json").read_text()) for side in ("source", "target")
    }
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
    for side in acls:
        sandbox.admin(side, admin_ops.create_acls, acls[side])
    try:
        assert run_mirror(profile, until_caught_up=True, skip_preflight=True, run_dir=str(tmp_path / "run")) == 0
        got = sandbox.as_mirror(  # to the end, so that a record more is seen
            "target", consume_to_end, profile.target_topic(topic), group_id="secure-mirror-src-tgt-ts"
        )
    finally:
        for side in acls:
            sandbox.admin(side, admin_ops.delete_acls, acls[side])
    by_key = {r["key"]: r for r in got}
    assert len(got) == len(by_key) == len(sent), [r["key"] for r in got]
    assert {k: r["timestamp"] for k, r in by_key.items()} == {s["key"]: s["timestamp"] for s in sent}
    assert {k: r["headers"] for k, r in by_key.items()} == {s["key"]: s["headers"] for s in sent}
    assert by_key[b"k3"]["value"] is None
