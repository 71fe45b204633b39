"""The job's MBeans and Spark metrics (jvm/sink securemirror.metrics) against MirrorMaker 2's own: the same object
name, keys in the same order, the same attributes of the same type, the same values for the same record; batches
combined as documented; and nothing but an alias, a target topic or a partition number in a name.

MirrorMaker 2's side is its real MirrorSourceMetrics from the Kafka jars in .deps (Kafka 4.2's connect-mirror), run
by tests/support/MetricNames.java, which prints what each side registered on the platform MBean server."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pyspark
import pytest

from secure_mirror import paths
from secure_mirror.sandbox.sink_jar import JAVAC_LINT
from tests.support.exposition import ATTRIBUTES

pytestmark = pytest.mark.jvm
METRICS = paths.REPO_ROOT / "jvm" / "sink" / "securemirror" / "metrics"
PROGRAM = paths.REPO_ROOT / "tests" / "support" / "MetricNames.java"
PYSPARK_JARS = f"{Path(pyspark.__file__).parent / 'jars'}/*"
MBEAN = "kafka.connect.mirror:type=MirrorSourceConnector,source=src,target=tgt,topic=src.orders,partition=0"


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("metrics-classes")
    javac = str(Path(paths.java_executable()).with_name("javac"))
    sources = sorted(str(p) for p in METRICS.glob("*.java"))
    res = subprocess.run(
        [javac, *JAVAC_LINT, "--release", "17", "-d", str(out), "-cp", PYSPARK_JARS, *sources],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    return out


def _mbeans(class_path: str, *args: str) -> tuple[list[str], dict[str, dict[str, tuple[str, float]]]]:
    """(problems, {mbean: {attribute: (type, value)}}) as MetricNames.java prints them."""
    res = subprocess.run(
        [paths.java_executable(), "-cp", class_path, str(PROGRAM), *args], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr[-4000:]
    problems, beans, current = [], {}, None
    for line in res.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "problem":
            problems.append(rest)
        elif kind == "mbean":
            current = beans.setdefault(rest, {})
        elif kind == "attribute" and current is not None:
            name, kind_of, value = rest.split(" ")
            current[name] = (kind_of, float(value))
    return problems, beans


def _batch(*rows: dict, source: str = "src", target: str = "tgt") -> str:
    return json.dumps({"source": source, "target": target, "partitions": list(rows)})


def _row(records: int, size: int, age: tuple[int, int, int] | None, latency: tuple[int, int, int] | None, **extra):
    row = {"topic": "src.orders", "partition": 0, "record-count": records, "byte-count": size, **extra}
    for name, spread in (("record-age-ms", age), ("replication-latency-ms", latency)):
        if spread is not None:
            row.update({f"{name}-min": spread[0], f"{name}-avg": spread[1], f"{name}-max": spread[2]})
    return row


def test_the_mbean_is_mirrormaker2s_for_the_same_record(classes):
    _, mm2 = _mbeans(paths.kafka_classpath(), "mm2")
    problems, ours = _mbeans(f"{classes}:{PYSPARK_JARS}", "ours", _batch(_row(1, 100, (20, 20, 20), (30, 30, 30))))
    assert problems == ["null"]
    mm2 = {name: bean for name, bean in mm2.items() if "type=MirrorSourceConnector" in name}
    assert list(mm2) == list(ours) == [MBEAN]  # domain, type and tags, in Kafka's JmxReporter's order
    assert {a: t for a, (t, _) in mm2[MBEAN].items()} == {a: t for a, (t, _) in ours[MBEAN].items()}
    for attribute, (_, value) in mm2[MBEAN].items():  # rates: one record over Kafka's shortest span, 30 s
        # Kafka's rate also counts the milliseconds between the record and the read (more on a loaded machine)
        tolerance = 0.05 if attribute.endswith("-rate") else 1e-3
        assert ours[MBEAN][attribute][1] == pytest.approx(value, rel=tolerance), attribute


def test_batches_combine_into_totals_spreads_and_the_latest_value(classes):
    problems, beans = _mbeans(
        f"{classes}:{PYSPARK_JARS}",
        "ours",
        _batch(_row(100, 5000, (10, 40, 90), (20, 50, 100))),
        _batch(_row(300, 9000, (5, 20, 30), (15, 25, 60))),
        _batch({**_row(7, 70, None, None), "partition": 1}),  # a continuous epoch: no latency, no ages here
    )
    assert problems == ["null"] * 3
    bean = {name: value for name, (_, value) in beans[MBEAN].items()}
    assert (bean["record-count"], bean["byte-count"]) == (400, 14000)
    assert (bean["record-rate"], bean["byte-rate"]) == (pytest.approx(400 / 30), pytest.approx(14000 / 30))
    assert (bean["record-age-ms-min"], bean["record-age-ms-max"]) == (5, 90)
    assert bean["record-age-ms-avg"] == pytest.approx((40 * 100 + 20 * 300) / 400)  # weighted by records
    assert (bean["replication-latency-ms-min"], bean["replication-latency-ms-max"]) == (15, 100)
    assert (bean["record-age-ms"], bean["replication-latency-ms"]) == (20, 25)  # the latest batch's average
    other = {name: value for name, (_, value) in beans[MBEAN.replace("partition=0", "partition=1")].items()}
    assert other["record-count"] == 7
    assert all(math.isnan(other[name]) for name in other if name.startswith(("record-age", "replication-latency")))


BAD = [  # (a partition row's fields, the batch's aliases): each refused, none echoed
    ({"topic": "a,b=c"}, {}),
    ({"topic": 'x",kafka.sasl.jaas.config=secret'}, {}),
    ({"topic": "ok"}, {"source": "sr c"}),
    ({"topic": "ok"}, {"target": "keytab=/etc/x.keytab"}),
    ({"topic": "ok", "partition": -1}, {}),
]


def test_nothing_but_an_alias_a_topic_or_a_partition_reaches_a_name(classes):
    bad = [_batch({**_row(1, 10, None, None), **row}, **aliases) for row, aliases in BAD]
    good = _row(1, 10, None, None, **{"kafka.sasl.jaas.config": "secret", "mirror.password": "secret"})
    problems, beans = _mbeans(f"{classes}:{PYSPARK_JARS}", "ours", *bad, _batch(good))
    assert all(p.startswith("a partition's figures were not published") for p in problems[:-1])
    assert len(problems) == len(BAD) + 1 and problems[-1] == "null"
    assert list(beans) == [MBEAN]  # only the good row's, with none of its extra keys
    assert "secret" not in "".join(problems) and "keytab" not in "".join(problems)
    assert set(beans[MBEAN]) == set(ATTRIBUTES)


def test_unreadable_figures_are_a_problem_not_an_error(classes):
    problems, beans = _mbeans(f"{classes}:{PYSPARK_JARS}", "ours", "{not json")
    assert problems[0].startswith("the batch's figures were not read") and beans == {}


CHECKPOINT_MBEAN = (
    "kafka.connect.mirror:type=MirrorCheckpointConnector,source=src,target=tgt,group=app,topic=src.orders,partition=0"
)


def _pass(*rows: dict, age_s: float = 0.0) -> str:
    """A group sync pass's checkpoints as the job hands them over, written ``age_s`` seconds (and 1 ms) ago: its time
    as ``-milliseconds``, which MetricNames.java turns into a time of its own clock once its JVM has started."""
    return json.dumps({"source": "src", "target": "tgt", "time": -(int(age_s * 1000) + 1), "figures": rows})


def _checkpoint(latency: int, **extra) -> dict:
    return {"group": "app", "topic": "src.orders", "partition": 0, "checkpoint-latency-ms": latency, **extra}


def test_the_checkpoint_mbean_is_mirrormaker2s_for_the_same_checkpoint(classes):
    _, mm2 = _mbeans(paths.kafka_classpath(), "mm2")  # MirrorCheckpointMetrics: group app, src.orders-0, 40 ms
    problems, ours = _mbeans(f"{classes}:{PYSPARK_JARS}", "ours", "checkpoints", _pass(_checkpoint(40)))
    assert problems == ["null"]
    mm2 = {name: bean for name, bean in mm2.items() if "type=MirrorCheckpointConnector" in name}
    assert list(mm2) == list(ours) == [CHECKPOINT_MBEAN]  # group between target and topic, as Kafka's JmxReporter
    assert mm2[CHECKPOINT_MBEAN] == ours[CHECKPOINT_MBEAN]  # names, types (double) and values


def test_checkpoints_combine_over_the_last_60_seconds(classes):
    problems, beans = _mbeans(
        f"{classes}:{PYSPARK_JARS}",
        "ours",
        "checkpoints",
        _pass(_checkpoint(50), {**_checkpoint(70), "partition": 1}, age_s=120),  # out of the window
        _pass(_checkpoint(100), age_s=10),
        _pass(_checkpoint(300, **{"upstream-offset": 5, "downstream-offset": 9}), age_s=5),
    )
    assert problems == ["null"] * 3
    bean = {name: value for name, (_, value) in beans[CHECKPOINT_MBEAN].items()}
    assert bean == {
        "checkpoint-latency-ms": 300,  # the latest
        "checkpoint-latency-ms-min": 100,
        "checkpoint-latency-ms-max": 300,
        "checkpoint-latency-ms-avg": 200,  # each checkpoint counted once
    }
    stale = {name: value for name, (_, value) in beans[CHECKPOINT_MBEAN.replace("partition=0", "partition=1")].items()}
    assert stale["checkpoint-latency-ms"] == 70
    assert all(math.isnan(value) for name, value in stale.items() if name != "checkpoint-latency-ms")


def test_a_group_name_takes_only_what_a_topic_can_have(classes):
    bad = [_pass(_checkpoint(1, group=group)) for group in ("a,b=c", 'x",sasl.jaas.config=secret', "")]
    problems, beans = _mbeans(f"{classes}:{PYSPARK_JARS}", "ours", "checkpoints", *bad, _pass(_checkpoint(1)), "{x")
    assert all(p.startswith("a checkpoint's figures were not published") for p in problems[:3]), problems
    assert problems[3] == "null" and problems[4].startswith("the checkpoints' figures were not read")
    assert list(beans) == [CHECKPOINT_MBEAN] and "secret" not in "".join(problems)


TASK_MBEAN = "kafka.connect:type=task-error-metrics,connector=MirrorSourceConnector,task=0"


def test_the_task_error_mbean_is_connects_with_the_jobs_retries_and_waits(classes):
    """Kafka Connect's ErrorHandlingMetrics of MirrorMaker 2's task 0 (one retry) beside the job's: the same name and
    attributes of the same type, plus the job's two (waiting-seconds, waits-ridden-total)."""
    _, mm2 = _mbeans(paths.kafka_classpath(), "mm2")
    waiting_since = -(90 * 1000)  # MetricNames.java makes it a time of its own clock: 90 s ago
    figures = {"task_retries": 1, "last_error_ms": 1_700_000_000_000, "waits": 2, "waiting_since_ms": waiting_since}
    problems, ours = _mbeans(f"{classes}:{PYSPARK_JARS}", "ours", "task", json.dumps(figures))
    assert problems == ["null"]
    assert list(ours) == [TASK_MBEAN] and TASK_MBEAN in mm2
    connect = {a: t for a, (t, _) in mm2[TASK_MBEAN].items()}
    job = {a: t for a, (t, _) in ours[TASK_MBEAN].items()}
    assert job == {**connect, "waiting-seconds": "double", "waits-ridden-total": "double"}
    values = {a: v for a, (_, v) in ours[TASK_MBEAN].items()}
    assert mm2[TASK_MBEAN]["total-retries"][1] == values["total-retries"] == 1
    assert values["last-error-timestamp"] == 1_700_000_000_000 and values["waits-ridden-total"] == 2
    assert 90 <= values["waiting-seconds"] < 150
    assert all(values[a] == 0 for a in connect if a not in ("total-retries", "last-error-timestamp"))
