"""The mirror job against the sandbox: GSSAPI on both sides (two principals, two realms), a topic created while
the job runs, a clean stop on SIGTERM, a resume from the checkpoint, lag, verify, and the refusals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from benchmarks.harness.load import produce_transactions
from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_REFUSED
from secure_mirror.preflight import FAIL, WARN, run_preflight
from secure_mirror.profile import load_profile
from secure_mirror.run.json_lines import OutcomeLine, RiddenFigures, RunLine
from secure_mirror.run.lag import lag
from secure_mirror.run.launcher import run_mirror
from secure_mirror.run.status_lines import StatusLine
from secure_mirror.sandbox.waiting import wait_for
from secure_mirror.verify import verify
from tests.support.cluster import consume_to_end
from tests.support.listening import answers_http, listening_ports, process_tree
from tests.support.mirror_case import MirrorCase, records
from tests.support.output_schemas import assert_valid_lines

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]


def _caught_up(profile, topics: set[str]):
    rows = lag(profile)
    mirrored = {r.topic for r in rows if r.offset is not None}
    return rows if topics <= mirrored and all(r.lag == 0 for r in rows) else None


@pytest.fixture(scope="module")
def mirrored(sandbox, tmp_path_factory):
    """One continuous run (new topic, SIGTERM), then a resume with --until-caught-up --json; shared by the tests."""
    folder = tmp_path_factory.mktemp("mirror")
    with MirrorCase(sandbox, folder) as case:
        case.create({"a": 3, "b": 1})
        case.produce("a", records(60, 3, "a"))
        case.produce("b", records(25, 1, "b"))
        metrics = folder / "metrics.jsonl"
        started_in = folder / "started-here"  # the user's folder: the run must leave nothing in it
        started_in.mkdir()
        job = subprocess.Popen(
            [
                *CLI,
                "run",
                str(case.profile_path),
                "--skip-preflight",
                "--trigger-interval",
                "1 second",
                "--metrics-file",
                str(metrics),
                "--run-dir",
                str(folder / "run"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=started_in,
        )
        try:
            wait_for(lambda: _caught_up(case.profile, {case.topic("a"), case.topic("b")}), 120, "the first batches")
            ports = listening_ports(process_tree(job.pid))  # the driver's RPC and block manager, py4j's gateway
            served = sorted(port for port in ports if answers_http(port))
            case.create({"c": 2})  # created while the job runs: picked up by subscribePattern
            case.produce("c", records(30, 2, "c"))
            wait_for(lambda: _caught_up(case.profile, {case.topic("c")}), 90, "the topic created during the run")
        finally:
            job.send_signal(signal.SIGTERM)
            out, err = job.communicate(timeout=120)
        case.produce("a", records(15, 3, "a2"))  # while stopped: the resume must bring these
        case.produce("c", records(10, 2, "c2"))
        resume = [*CLI, "run", str(case.profile_path), "--skip-preflight", "--until-caught-up", "--json"]
        resumed = subprocess.run(
            [*resume, "--metrics-file", str(metrics), "--run-dir", str(folder / "run2")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        yield {
            "case": case,
            "first_exit": job.returncode,
            "out": out,
            "err": err,
            "resumed": resumed.returncode,
            "resumed_out": resumed.stdout,
            "resumed_err": resumed.stderr,
            "metrics": metrics,
            "folder": folder,
            "left_behind": sorted(p.name for p in started_in.iterdir()),
            "listening": ports,
            "serving_http": served,
        }


def test_mirrors_renamed_topics_with_a_new_topic_and_resumes(mirrored):
    case = mirrored["case"]
    assert mirrored["first_exit"] == EXIT_OK, mirrored["err"][-3000:]
    assert mirrored["left_behind"] == []  # Spark's artifacts/ goes into the run folder, not where run started
    assert mirrored["resumed"] == EXIT_OK, mirrored["resumed_err"][-3000:]
    result = verify(case.profile)
    assert result.ok, result.text()
    compared = {(c.topic, c.partition): c for c in result.comparisons}
    assert compared[(case.topic("a"), 0)].target_topic == f"src.{case.topic('a')}"
    assert sum(c.source_records for c in result.comparisons) == 60 + 25 + 30 + 15 + 10
    assert {c.topic for c in result.comparisons} == {case.topic(t) for t in "abc"}
    assert all(c.partition is not None for c in result.comparisons)  # same partition counts: partitions kept
    assert all(row.lag == 0 for row in lag(case.profile))


def test_the_running_job_serves_no_web_page(mirrored):
    """Spark's UI is off unless the profile turns it on (render/spark.py SPARK_UI_KEYS): none of the ports the running
    job's processes listen on answers HTTP. test_metrics_live.py runs one with spark.ui.port set, and scrapes it."""
    assert mirrored["listening"], "no listening port found for the job's processes: the check saw nothing"
    assert mirrored["serving_http"] == []


def test_records_keep_keys_headers_and_null_values(mirrored, sandbox):
    case = mirrored["case"]
    got = sandbox.admin("target", consume_to_end, f"src.{case.topic('b')}")  # to the end: a record more is seen
    expected = records(25, 1, "b")
    assert [(r["key"], r["value"], r["headers"]) for r in got] == [
        (e["key"], e["value"], e["headers"]) for e in expected
    ]


def test_status_lines_and_metrics_file(mirrored):
    assert "records, in" in mirrored["out"] and "behind the source" in mirrored["out"]
    lines = [json.loads(line) for line in mirrored["metrics"].read_text().splitlines()]
    partitions = [p for line in lines for p in line["partitions"]]
    assert sum(p["record-count"] for p in partitions) == sum(line["record-count"] for line in lines) >= 115
    assert {"record-count", "first-offset", "last-offset", "records-behind", "target-topic"} <= set(partitions[0])
    written = [line for line in lines if line["record-count"]]
    names = {"byte-count", "byte-rate", "record-age-ms-max", "replication-latency-ms-avg", "records-behind"}
    assert names <= set(written[0])
    assert all(
        line["byte-count"] > 0 and line["replication-latency-ms-max"] >= line["replication-latency-ms-min"] >= 0
        for line in written
    )


def test_run_json_prints_run_lines_ending_caught_up(mirrored):
    """The resume ran with --json: every stdout line is one of schema/run-output.schema.json's kinds."""
    assert_valid_lines("run", mirrored["resumed_out"])
    lines = [RunLine.model_validate_json(line).root for line in mirrored["resumed_out"].splitlines()]
    assert lines[0].kind == "started", mirrored["resumed_out"][:2000]
    nothing_ridden = RiddenFigures(waits=0, longest_seconds=0, task_retries=0)
    assert lines[-1] == OutcomeLine(
        kind="outcome", status="caught-up", exit_code=EXIT_OK, message="", ridden=nothing_ridden
    ), lines[-1]
    status = [line for line in lines if isinstance(line, StatusLine)]
    assert sum(line.record_count or 0 for line in status) >= 15 + 10  # what was produced while it was stopped


def test_checkpoint_of_another_profile_is_refused(mirrored):
    case, folder = mirrored["case"], mirrored["folder"]
    text = case.profile_path.read_text().replace("rule: alias_prefix", "rule: identity")
    other = folder / "other.yaml"
    other.write_text(text)
    proc = subprocess.run(
        [*CLI, "run", str(other), "--skip-preflight", "--until-caught-up", "--run-dir", str(folder / "run3")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == EXIT_BAD_INPUT
    assert (
        "belongs to a profile with other topic or rename settings (rename_rule: 'alias_prefix' -> "
        "'identity')" in proc.stderr
    )
    assert load_profile(other).mirror.checkpoint_location == case.profile.mirror.checkpoint_location


def test_mixed_gssapi_source_and_scram_target(sandbox, tmp_path):
    with MirrorCase(sandbox, tmp_path, target_mechanism="SCRAM-SHA-512") as case:
        assert case.profile.target.mechanism == "SCRAM-SHA-512"
        case.create({"m": 2})
        case.produce("m", records(40, 2, "m"))
        report = run_preflight(case.profile)  # SCRAM-SHA-512 pre-flighted live (WRITE on src.* is still unproven)
        assert {c.id for c in report.checks if c.status in (FAIL, WARN)} == set(), report.to_json()
        assert "authenticated as User:mirror " in report.get("target.kafka.connect").finding
        assert report.get("target.java.client").status == "pass"
        assert run_mirror(case.profile, until_caught_up=True, skip_preflight=True, run_dir=str(tmp_path / "run")) == 0
        result = verify(case.profile)
        assert result.ok and result.to_dict()["source_records"] == 40, result.text()


def test_target_topic_missing_and_create_not_allowed(sandbox, tmp_path):
    with MirrorCase(sandbox, tmp_path, create_allowed=False) as case:
        case.create({"n": 1})
        case.produce("n", records(5, 1, "n"))
        proc = subprocess.run(
            [
                *CLI,
                "run",
                str(case.profile_path),
                "--skip-preflight",
                "--until-caught-up",
                "--supervise",
                "--run-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == EXIT_REFUSED, proc.stderr
        assert (
            f"target topic src.{case.topic('n')} does not exist and the target identity may not create it "
            "(TopicAuthorizationException): create it with 1 partitions, or grant CREATE"
        ) in proc.stderr
        assert "restart" not in proc.stderr  # supervise does not retry what a restart cannot fix


def test_exactly_once_mirrors_what_a_read_committed_source_reader_sees(sandbox, tmp_path):
    """Source producers that commit, abort and write outside transactions, interleaved on two partitions: an
    exactly_once mirror leaves on the target exactly what a read_committed reader of the source sees, in the same
    order per partition; a batch Spark runs again (its commit gone, as after a crash) adds nothing, although the
    aborted records and the transaction markers leave gaps in the source offsets the sink's positions step over."""
    with MirrorCase(sandbox, tmp_path, mirror={"delivery": {"guarantee": "exactly_once"}}) as case:
        case.create({"tx": 2})
        topic = case.topic("tx")

        def batch(tag: str, n: int) -> list[dict]:
            return [
                {"key": f"{tag}-{i}".encode(), "value": f"{tag} {i}".encode(), "partition": i % 2} for i in range(n)
            ]

        def keys(rows: list[dict]) -> dict[int, list[bytes]]:
            return {p: [r["key"] for r in rows if r["partition"] == p] for p in (0, 1)}

        first = [
            {"records": batch("c1", 6), "end": "commit"},
            {"records": batch("a1", 5), "end": "abort"},
            {"records": batch("n1", 3), "end": "none"},
            {"records": batch("c2", 4), "end": "commit"},
            {"records": batch("a2", 7), "end": "abort"},
        ]
        more = [
            {"records": batch("a3", 4), "end": "abort"},
            {"records": batch("c3", 5), "end": "commit"},
            {"records": batch("n2", 2), "end": "none"},
        ]
        for attempt, transactions, expected in (("first", first, 13), ("replay and more", more, 20)):
            sandbox.admin("source", produce_transactions, topic, transactions, f"{case.prefix}-source-producer")
            if attempt != "first":  # this start runs the last batch again (its commit gone, as after a crash
                # before it): the sink must skip what the target holds
                commits = sorted((tmp_path / "checkpoint" / "commits").glob("[0-9]*"), key=lambda f: int(f.name))
                commits[-1].unlink()
                commits[-1].with_name(f".{commits[-1].name}.crc").unlink(missing_ok=True)  # Spark's checksum file
            code = run_mirror(
                case.profile, until_caught_up=True, skip_preflight=True, run_dir=str(tmp_path / f"run-{attempt}")
            )
            assert code == EXIT_OK
            source = sandbox.admin("source", consume_to_end, topic)
            target = sandbox.admin("target", consume_to_end, case.profile.target_topic(topic))
            assert len(source) == expected and not any(r["key"].startswith(b"a") for r in source)
            assert keys(target) == keys(source), attempt
        # the mirror's own source gave the sink a producer per task: its positions are in the topic's group
        prefix, target_topic = case.profile.transactional_prefix, case.profile.target_topic(topic)
        positions = sandbox.admin("target", _positions, f"{prefix}topic#{topic}", target_topic, 2)
        assert sorted(positions) == [(target_topic, 0), (target_topic, 1)], positions
        assert all(offset > 0 for offset in positions.values()), positions
        for p in (0, 1):  # no producer per partition: its groups hold nothing
            assert sandbox.admin("target", _positions, f"{prefix}{topic}-{p}", target_topic, 2) == {}
        result = verify(case.profile)
        assert result.ok, result.to_dict()


def _positions(conf: dict, group: str, topic: str, partitions: int) -> dict[tuple[str, int], int]:
    """The committed offsets of ``group`` (the sink's positions) on ``topic``'s partitions, read as that group's
    consumer would (never joining it)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": group, "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=60)
    finally:
        consumer.close()
    return {(tp.topic, tp.partition): tp.offset for tp in found if tp.offset >= 0}
