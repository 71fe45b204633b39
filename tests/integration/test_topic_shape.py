"""The target takes the source's shape (mirror.topic_shape, docs/replica.md), live on the sandbox with one job run:
a compacted source topic with tombstones and non-default retention and max.message.bytes is created on the target with
those configs (not the excluded min.insync.replicas); tombstones arrive as null values, keys and headers byte-exact; a
config changed on the source mid-run reaches the target within the interval; a topic whose partitions grow mid-run
gets its target grown, and the new partitions' records land in the same partition numbers; heartbeats go on while
nothing is produced (issue 29 part 4)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from secure_mirror.run.lag import lag_heartbeat
from tests.support.cluster import grow, partition_count, set_config, topic_configs
from tests.support.mirror_case import MirrorCase, caught_up, wait_for

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]
INTERVAL = 5  # mirror.topic_shape.interval_seconds of this run
QUIET = 4  # seconds with no record produced, heartbeats every second (mirror.heartbeats' default)
COMPACTED = {
    "cleanup.policy": "compact",
    "retention.ms": "7200000",
    "max.message.bytes": "200000",
    "min.insync.replicas": "1",  # excluded by default (MirrorMaker 2's list): never copied
}


def consumed(sandbox, side: str, topic: str, count: int) -> list[dict]:
    from secure_mirror.kafka import admin_ops

    return sandbox.admin(side, admin_ops.consume, topic, max_records=count)


def keyed(tag: str, count: int, partition: int = 0) -> list[dict]:
    """Records with keys and headers (a binary one); every third key's last record a tombstone (null value)."""
    return [
        {
            "key": f"{tag}-k{i % 6}".encode(),
            "value": None if i >= count - 2 else f"{tag}-v{i}".encode() + bytes([0, 255]),
            "headers": [("h", b"x"), ("bin", bytes([0, 255, i])), ("empty", b"")],
            "partition": partition,
        }
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def shaped(sandbox, tmp_path_factory):
    """One job run: created topics, a config change and a partition growth while it runs; the facts for the tests."""
    from secure_mirror.kafka import admin_ops

    folder = tmp_path_factory.mktemp("shape")
    mirror = {"topic_shape": {"interval_seconds": INTERVAL}}
    facts: dict = {}
    started = time.monotonic()
    with MirrorCase(sandbox, folder, mirror=mirror) as case:
        compacted, growing = case.topic("c"), case.topic("g")
        sandbox.admin("source", admin_ops.create_topics, {compacted: 1}, config=COMPACTED)
        case.create({"g": 1})
        case.produce("c", keyed("c", 12))
        case.produce("g", keyed("g0", 4))
        target_c, target_g = case.profile.target_topic(compacted), case.profile.target_topic(growing)
        output = (folder / "job.out").open("w")  # the driver's lines come on stdout (spark-submit merges them)
        job = subprocess.Popen(
            [*CLI, "run", str(case.profile_path), "--skip-preflight", "--trigger-interval", "1 second"]
            + ["--run-dir", str(folder / "run")],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(lambda: caught_up(case.profile, {compacted, growing}), 240, "the first batches")
            facts["created_configs"] = sandbox.admin("target", topic_configs, target_c)
            facts["source_c"] = consumed(sandbox, "source", compacted, 12)
            facts["target_c"] = consumed(sandbox, "target", target_c, 12)
            # a config changed on the source mid-run
            sandbox.admin("source", set_config, compacted, "retention.ms", "3600000")
            changed = time.monotonic()
            wait_for(
                lambda: sandbox.admin("target", topic_configs, target_c).get("retention.ms") == "3600000",
                INTERVAL + 20,
                "the changed retention.ms on the target",
            )
            facts["config_seconds"] = time.monotonic() - changed
            # partitions grown mid-run, records produced to the new ones at once
            sandbox.admin("source", grow, growing, 3)
            for partition in (1, 2):
                case.produce("g", keyed(f"g{partition}", 3, partition))
            wait_for(lambda: caught_up(case.profile, {growing}), 90, "the grown topic's records")
            facts["target_partitions"] = sandbox.admin("target", partition_count, target_g)
            facts["source_g"] = consumed(sandbox, "source", growing, 10)
            facts["target_g"] = consumed(sandbox, "target", target_g, 10)
            # issue 29 part 4: heartbeats with no traffic (MirrorMaker 2's topic and bytes, docs/heartbeats.md)
            quiet_from = int(time.time() * 1000)
            time.sleep(QUIET)  # nothing produced: the flow is alive, its records are not
            facts["quiet_from"], facts["beat"] = quiet_from, lag_heartbeat(case.profile)
        finally:
            job.send_signal(signal.SIGTERM)
            job.wait(timeout=120)
            output.close()
    facts["log"] = (folder / "job.out").read_text()
    facts["returncode"] = job.returncode
    print(f"topic shape module: {time.monotonic() - started:.1f} s; config synced in {facts['config_seconds']:.1f} s")
    return facts


def _exact(records: list[dict]) -> list[tuple]:
    """Each record's key, value (None: a tombstone), headers and partition, byte for byte, in a stable order."""
    return sorted(((r["key"], r["value"], tuple(r["headers"] or ()), r["partition"]) for r in records), key=repr)


def test_the_target_topic_is_created_with_the_source_configs_less_the_excluded(shaped):
    configs = shaped["created_configs"]
    assert {k: configs.get(k) for k in ("cleanup.policy", "max.message.bytes")} == {
        "cleanup.policy": "compact",
        "max.message.bytes": "200000",
    }
    assert "min.insync.replicas" not in configs


def test_tombstones_stay_null_and_keys_and_headers_are_byte_exact(shaped):
    assert len(shaped["target_c"]) == 12
    assert _exact(shaped["target_c"]) == _exact(shaped["source_c"])
    assert sum(r["value"] is None for r in shaped["target_c"]) == 2  # null, not empty bytes


def test_a_config_changed_mid_run_reaches_the_target_within_the_interval(shaped):
    assert shaped["config_seconds"] <= INTERVAL + 5  # the interval plus a watch step and the admin calls


def test_grown_partitions_are_grown_on_the_target_first_and_records_keep_their_partition(shaped):
    assert shaped["target_partitions"] == 3
    assert len(shaped["target_g"]) == 10
    assert _exact(shaped["target_g"]) == _exact(shaped["source_g"])
    assert {r["partition"] for r in shaped["target_g"]} == {0, 1, 2}
    assert "secure-mirror job: grew target topic" in shaped["log"]
    assert shaped["returncode"] == 0, shaped["log"][-2000:]


def test_heartbeats_go_on_with_no_traffic(shaped):
    beat = shaped["beat"]
    assert beat is not None and beat.problem is None, beat
    # a heartbeat the target acknowledged while nothing was produced, and lag does not flag the flow
    assert beat.newest_ms is not None and beat.newest_ms >= shaped["quiet_from"] + 1000, (beat, shaped["quiet_from"])
    assert not beat.stale and " alive, newest " in beat.text(), beat.text()
