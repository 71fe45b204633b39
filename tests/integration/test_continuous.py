"""The low-latency mode (``mirror.spark.trigger: continuous``) on the sandbox: Spark's continuous trigger writing
through the mirror's sink's streaming write, with records arriving, a topic created while the job runs (the query is
restarted with it planned), a stop while records are being written and a resume that loses none of them (at least
once: the duplicates are counted and printed), a stop when idle after which verify passes, the epochs' figures in
the metrics file, and a latency figure printed (source append time to target append time; not asserted)."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import threading
import time

import pytest

from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_OK, BadInputError
from secure_mirror.kafka import admin_ops
from secure_mirror.profile.job_settings import UNTIL_CAUGHT_UP_CONTINUOUS
from secure_mirror.run.launcher import run_mirror
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import caught_up, wait_for
from secure_mirror.verify import verify
from tests.support.cluster import grow, partition_count, partition_records, set_config, topic_configs
from tests.support.mirror_case import MirrorCase, records
from tests.support.seeds import seeded

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.slow]
CLI = [sys.executable, "-m", "secure_mirror"]
APPEND_TIME = {"message.timestamp.type": "LogAppendTime"}  # both sides: the brokers' clocks time the copy
LATENCY_RECORDS = 100
SHAPE_INTERVAL = 3  # mirror.topic_shape.interval_seconds of this module's job


def _start(case, folder, metrics):
    return subprocess.Popen(
        [*CLI, "run", str(case.profile_path), "--skip-preflight", "--metrics-file", str(metrics)]
        + ["--run-dir", str(folder), "--status-interval", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stop(job) -> tuple[int, str, str]:
    job.send_signal(signal.SIGTERM)
    out, err = job.communicate(timeout=120)
    return job.returncode, out, err


def _latency_ms(sandbox, case) -> list[int]:
    """Per record of the latency topic: the target's append time minus the source's (both LogAppendTime)."""
    name = case.topic("l")
    source = sandbox.admin("source", admin_ops.consume, name, max_records=LATENCY_RECORDS)
    target = sandbox.admin("target", admin_ops.consume, case.profile.target_topic(name), max_records=LATENCY_RECORDS)
    appended = {r["key"]: r["timestamp"] for r in source}
    return sorted(r["timestamp"] - appended[r["key"]] for r in target if r["key"] in appended)


@pytest.fixture(scope="module")
def continuous(sandbox, tmp_path_factory):
    folder = tmp_path_factory.mktemp("continuous")
    events = folder / "events"
    events.mkdir()
    conf = {"spark.eventLog.enabled": True, "spark.eventLog.compress": False, "spark.eventLog.dir": f"file://{events}"}
    conf.update(sink_conf(folder))
    # 9 partitions at the end (a grows from 2 to 3); the mirror's source plans a task for each of the 10 slots with any
    spark = {"master": "local[10]", "trigger": "continuous", "continuous_interval_ms": 500, "conf": conf}
    mirror = {"spark": spark, "delivery": {"linger_ms": 0}, "topic_shape": {"interval_seconds": SHAPE_INTERVAL}}
    rng = seeded("continuous: records written while the job stops")
    with MirrorCase(sandbox, folder, mirror=mirror) as case:
        case.create({"a": 2, "b": 1})
        sandbox.admin("source", admin_ops.create_topics, {case.topic("l"): 1}, config=APPEND_TIME)
        sandbox.admin(
            "target", admin_ops.create_topics, {case.profile.target_topic(case.topic("l")): 1}, config=APPEND_TIME
        )
        case.produce("a", records(40, 2, "a"))
        case.produce("b", records(20, 1, "b"))
        metrics = folder / "metrics.jsonl"
        started = time.monotonic()
        job = _start(case, folder / "run1", metrics)
        written_during_stop = 10
        try:
            wait_for(lambda: caught_up(case.profile, {case.topic("a"), case.topic("b")}), 150, "the first epochs")
            first_epochs = time.monotonic() - started
            for burst in range(5):  # 100 records, 20 every 0.2 s, into a partition-kept LogAppendTime topic
                case.produce("l", [{"key": f"l{burst}-{i}".encode(), "value": b"x" * 100} for i in range(20)])
                time.sleep(0.2)
            case.create({"c": 2, "d": 2})  # created while the job runs: the query restarts with them planned
            case.produce("c", records(30, 2, "c"))
            case.produce("d", records(10, 2, "d"))
            every = {case.topic(t) for t in "abcdl"}
            wait_for(lambda: caught_up(case.profile, every), 120, "the new topics")
            # records written while the job is stopped: a producer keeps writing to d, the stop comes in between
            producing = threading.Event()

            def keep_producing():
                nonlocal written_during_stop
                while not producing.is_set():
                    count = rng.randint(5, 30)
                    case.produce("d", records(count, 2, f"d{written_during_stop}"))
                    written_during_stop += count

            producer = threading.Thread(target=keep_producing)
            producer.start()
            time.sleep(rng.uniform(1.0, 3.0))
        finally:
            first = _stop(job)
        producing.set()
        producer.join()
        case.produce("a", records(15, 2, "a2"))  # while stopped: the resume must bring these
        job = _start(case, folder / "run2", metrics)
        try:
            wait_for(lambda: caught_up(case.profile, every), 150, "the resumed job")
            # the shape while the continuous query runs: a config changed on b, a grown and records in the new
            # partition (the source reconfigures itself within 5 s; the target must have grown before they are written)
            target_a, target_b = case.profile.target_topic(case.topic("a")), case.profile.target_topic(case.topic("b"))
            sandbox.admin("source", set_config, case.topic("b"), "retention.ms", "3600000")
            sandbox.admin("source", grow, case.topic("a"), 3)
            case.produce(
                "a", [{"key": f"a3-{i}".encode(), "value": f"a3-v{i}".encode(), "partition": 2} for i in range(12)]
            )
            shaped = time.monotonic()
            wait_for(lambda: caught_up(case.profile, every), 90, "the grown partition's records")
            wait_for(
                lambda: sandbox.admin("target", topic_configs, target_b).get("retention.ms") == "3600000",
                SHAPE_INTERVAL + 30,
                "the changed retention.ms on the target",
            )
            shape = {
                "seconds": time.monotonic() - shaped,
                "partitions": sandbox.admin("target", partition_count, target_a),
                "grown": [value for _key, value in sandbox.admin("target", partition_records, target_a, 2)],
            }
            time.sleep(1.5)  # idle: the epoch in flight at the stop holds no record
        finally:
            second = _stop(job)
        ran = time.monotonic() - started
        yield {
            "case": case,
            "first": first,
            "second": second,
            "metrics": metrics,
            "latency": _latency_ms(sandbox, case),
            "first_epochs_s": first_epochs,
            "ran_s": ran,
            "written_during_stop": written_during_stop,
            "folder": folder,
            "events": events,
            "shape": shape,
        }


def test_records_arrive_and_a_stop_and_resume_lose_nothing(continuous):
    case = continuous["case"]
    for code, _out, err in (continuous["first"], continuous["second"]):
        assert code == EXIT_OK, err[-3000:]
    assert "appeared on the source; restarting the continuous query" in continuous["first"][1]
    result = verify(case.profile)
    by_topic: dict[str, list] = {}
    for c in result.comparisons:
        by_topic.setdefault(c.topic, []).append(c)
    assert set(by_topic) == {case.topic(t) for t in "abcdl"}
    # stopped while idle: each record once
    for name in "abcl":
        assert all(c.ok for c in by_topic[case.topic(name)]), result.text()
    expected = {"a": 67, "b": 20, "c": 30, "d": continuous["written_during_stop"], "l": LATENCY_RECORDS}
    for name, count in expected.items():
        assert sum(c.source_records for c in by_topic[case.topic(name)]) == count
    # stopped while d was being written: nothing missing, nothing foreign; an epoch written again is duplicated
    d = by_topic[case.topic("d")]
    assert all(c.missing == 0 and c.extra == 0 for c in d), result.text()
    duplicated = sum(c.target_records - c.source_records for c in d)
    assert duplicated == sum(c.duplicated for c in d) or all(c.ok for c in d), result.text()
    print(
        f"\ncontinuous: {continuous['written_during_stop']} records in d, written before, during and after the stop, "
        f"{duplicated} of them on the target twice (at least once), none missing"
    )


def test_latency_is_printed(continuous):
    latency = continuous["latency"]
    assert len(latency) == LATENCY_RECORDS
    p50, p99 = statistics.median(latency), latency[min(len(latency) - 1, int(len(latency) * 0.99))]
    print(
        f"\ncontinuous trigger (500 ms epochs, linger 0): source append -> target append over {len(latency)} records: "
        f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {latency[-1]} ms; first epochs {continuous['first_epochs_s']:.1f} s "
        f"after start; the whole case {continuous['ran_s']:.1f} s"
    )


def test_epochs_figures_in_the_metrics_file_and_status_lines(continuous):
    lines = [json.loads(line) for line in continuous["metrics"].read_text().splitlines()]
    written = [line for line in lines if line["record-count"]]
    assert written and all("epoch" in line and line["records-behind"] is None for line in written)
    rows = [row for line in written for row in line["partitions"]]
    assert {"record-count", "byte-count", "record-age-ms-max", "first-offset", "last-offset"} <= set(rows[0])
    assert not any(name.startswith("replication-latency") for row in rows for name in row)
    assert sum(line["record-count"] for line in written) >= 55 + 20 + 30 + LATENCY_RECORDS
    assert all(line["record-count"] == sum(r["record-count"] for r in line["partitions"]) for line in written)
    out = continuous["first"][1]
    assert "records, out" in out and "behind the source n/a" in out, out[-2000:]


def test_until_caught_up_is_refused_with_continuous(continuous):
    case = continuous["case"]
    with pytest.raises(BadInputError) as refused:
        run_mirror(case.profile, until_caught_up=True, skip_preflight=True, run_dir=str(continuous["folder"] / "r"))
    assert str(refused.value) == UNTIL_CAUGHT_UP_CONTINUOUS
    assert refused.value.exit_code == EXIT_BAD_INPUT


def test_the_plan_shows_the_continuous_write_and_none_of_the_sinks_options(continuous):
    """writeStream.format(...).options(...) hands the options to the sink, not to the plan: the event log (every
    plan Spark ran) holds the continuous write, named by the sink's description, and none of the option names."""
    text = "".join(p.read_text(errors="replace") for p in continuous["events"].rglob("*") if p.is_file())
    assert "WriteToContinuousDataSource" in text and "secure-mirror sink settings (at_least_once)" in text
    for option in ("mirror.target-topic-pieces", "mirror.keep-partition-topics", "kafka.sasl.jaas.config"):
        assert option not in text, option


def test_the_shape_is_synced_while_the_continuous_query_runs(continuous):
    """A config changed on the source and a kept topic grown mid-run reach the target within the interval, and the
    records of the grown partition land in the same partition number (the sink's producer waits for it)."""
    shape = continuous["shape"]
    print(f"\ncontinuous: shape synced {shape['seconds']:.1f} s after the change (interval {SHAPE_INTERVAL} s)")
    assert shape["partitions"] == 3
    assert sorted(set(shape["grown"])) == sorted(f"a3-v{i}".encode() for i in range(12)), shape["grown"]
