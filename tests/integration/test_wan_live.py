"""The mirror across a link (docs/wan.md): the shared sandbox's source brokers reached through Toxiproxy at a 50 ms
round trip (sandbox/wan.py, the WAN listener every source broker has), in both guarantees. The link is shown to be
there (pre-flight's probe measures the round trip through it and beside it), and every record is counted on the
target by kcat, a reader this project did not write (read_committed: exactly_once's aborted writes would not count).
The continuous mode (the mirror's own source under Spark's continuous trigger) is run across the link too, and counted
the same way. A micro-batch task's consumer polled ahead (jvm/sink FetchAhead, where Spark's configuration sets
spark.securemirror.source.fetchAhead): through the link, as the mirror's identity, it goes on fetching while the
task takes nothing, up to two responses held, and then hands every record once, in order; polled by the task
itself, as by default, it hands every record too (tests/support/FetchAheadCheck.java). The proxy runs for this
module only; the other modules' profiles reach the source directly."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from secure_mirror import paths
from secure_mirror.preflight.probes import round_trip, tls
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.sandbox.sink_jar import SOURCES
from secure_mirror.sandbox.waiting import caught_up, wait_for
from secure_mirror.sandbox.wan import Link
from tests.support import seeds
from tests.support.cluster import kcat_consume
from tests.support.mirror_case import MirrorCase, records
from tests.support.sink_jar import run_check

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
RTT_MS = 50
FETCH_AHEAD_CHECK = paths.REPO_ROOT / "tests" / "support" / "FetchAheadCheck.java"
RESPONSE = 2 * 1024 * 1024  # the check's fetch.max.bytes: its data is several responses


@pytest.fixture(scope="module")
def link(sandbox):
    """The shared sandbox with its proxy at a 50 ms round trip; stopped after the module."""
    if "wan" not in sandbox.state:  # SECURE_MIRROR_TEST_SANDBOX naming one started before the WAN listener
        pytest.skip("this sandbox was started before its source brokers had the WAN listener; start a new one")
    sandbox.start_wan(Link(RTT_MS))
    try:
        yield sandbox
    finally:
        sandbox.stop_wan()


def _servers(bootstrap: list[str]) -> list[tuple[str, int]]:
    return [(server.rsplit(":", 1)[0], int(server.rsplit(":", 1)[1])) for server in bootstrap]


def test_the_link_adds_its_round_trip_and_the_direct_listener_does_not(link):
    context = tls.context_for(load_profile(link.profile_path).source.tls_settings)
    through = round_trip.measure(_servers(link.wan_bootstrap_servers()), context, 10.0)
    direct = round_trip.measure(_servers(link.sides["source"].bootstrap_servers), context, 10.0)
    assert all(answer.get("ms", 0) >= RTT_MS * 0.95 for answer in through.values()), through
    assert all(answer.get("ms", RTT_MS) < RTT_MS / 2 for answer in direct.values()), direct
    assert not (link.base / "profile.yaml").read_text().count(link.wan_bootstrap_servers()[0])
    assert link.wan_bootstrap_servers()[0] in (link.base / "profile-wan.yaml").read_text()


def _across(case: MirrorCase, link) -> None:
    """The case's profile reaching the source through the link (the mirror's side of it)."""
    data = yaml.safe_load(case.profile_path.read_text())
    data["source"]["bootstrap_servers"] = link.wan_bootstrap_servers()
    case.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
    case.profile = load_profile(case.profile_path)


def _target_positions(case: MirrorCase, folder: Path, monkeypatch, *, waiting: bool = False) -> tuple[list[str], str]:
    """Every record on the target topic as kcat reads it (read_committed): ``partition:offset`` each, and its stderr
    (``waiting``: none while the job has not created the topic yet)."""
    rendered = folder / "rendered"
    if not rendered.exists():
        render_all(case.profile, rendered)
        (folder / "cc").mkdir(mode=0o700)
    monkeypatch.setenv("KRB5_CONFIG", str(rendered / "krb5.conf"))
    monkeypatch.setenv("KRB5CCNAME", f"DIR:{folder / 'cc'}")
    target = case.profile.target_topic(case.topic("w"))
    read = kcat_consume(
        rendered / "target" / "librdkafka.conf", target, "-f", "%p:%o\\n", "-X", "isolation.level=read_committed"
    )
    if waiting and read.returncode != 0 and "Unknown topic or partition" in read.stderr:
        return [], read.stderr
    assert read.returncode == 0, read.stderr[-2000:]
    return read.stdout.split(), read.stderr


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
def test_the_mirror_copies_every_record_across_the_link(link, tmp_path, monkeypatch, guarantee):
    rng = seeds.seeded(f"wan {guarantee} records")
    count = rng.randint(150, 300)
    with MirrorCase(link, tmp_path, mirror={"delivery": {"guarantee": guarantee}}) as case:
        _across(case, link)
        case.create({"w": 3})
        case.produce("w", records(count, 3, "w"))
        done = subprocess.run(
            case.run_argv(tmp_path / "run", "--until-caught-up"), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        positions, stderr = _target_positions(case, tmp_path, monkeypatch)
        assert len(positions) == count and len(set(positions)) == count, (count, len(positions), stderr[-500:])


def test_the_continuous_mode_copies_every_record_across_the_link(link, tmp_path, monkeypatch):
    """The continuous query on the mirror's own source (two never-ending tasks for three partitions: the task slots
    local[2] has, not one per partition) copies what is there and what arrives while it runs, then stops on SIGTERM."""
    rng = seeds.seeded("wan continuous records")
    before, during = rng.randint(100, 200), rng.randint(50, 100)
    mirror = {"spark": {"trigger": "continuous", "continuous_interval_ms": 500}, "delivery": {"linger_ms": 0}}
    with MirrorCase(link, tmp_path, mirror=mirror) as case:
        _across(case, link)
        case.create({"w": 3})
        case.produce("w", records(before, 3, "w"))
        out, err = tmp_path / "job.out", tmp_path / "job.err"  # files: a pipe nobody reads could stall the job
        with out.open("w") as stdout, err.open("w") as stderr:
            job = subprocess.Popen(case.run_argv(tmp_path / "run"), stdout=stdout, stderr=stderr)
        try:
            deadline = time.monotonic() + 150
            while len(_target_positions(case, tmp_path, monkeypatch, waiting=True)[0]) < before:
                assert time.monotonic() < deadline, "the continuous job did not copy the first records in 150 s"
                assert job.poll() is None, err.read_text()[-3000:]
                time.sleep(2)
            case.produce("w", records(during, 3, "w-during"))
            while len(_target_positions(case, tmp_path, monkeypatch)[0]) < before + during:
                assert time.monotonic() < deadline, "the continuous job did not copy every record in 150 s"
                time.sleep(1)
            # the positions the readers handed Spark (SlotPositions) are the source's ends once an epoch commits
            wait_for(lambda: caught_up(case.profile, {case.topic("w")}), 30, "the checkpoint at the source's end")
        finally:
            job.send_signal(signal.SIGTERM)
            job.wait(timeout=120)
        positions, stderr = _target_positions(case, tmp_path, monkeypatch)
        assert len(positions) == before + during == len(set(positions)), (before, during, len(positions), stderr)
        assert job.returncode == 0, err.read_text()[-3000:]


def test_a_source_task_fetches_ahead_while_it_copies_nothing_then_reads_each_record_once(link, tmp_path):
    """Kafka's consumer fetches no partition it still holds records of; the task's fetch-ahead thread moves them out,
    so fetching goes on while the task copies (here: takes nothing) until two responses are held for it."""
    rng = seeds.seeded("wan fetch-ahead records")
    count = rng.randint(10_000, 12_000)  # about 2,000 bytes each: 10 or more responses of 2 MiB
    with MirrorCase(link, tmp_path) as case:
        _across(case, link)
        case.create({"f": 3})
        case.produce("f", [{"key": None, "value": rng.randbytes(2000), "partition": i % 3} for i in range(count)])
        rendered = tmp_path / "rendered"
        render_all(case.profile, rendered)
        out = run_check(
            tmp_path / "classes",
            FETCH_AHEAD_CHECK,
            sorted(SOURCES.glob("*/*.java")),
            "securemirror.source.FetchAheadCheck",
            str(rendered / "source" / "client.properties"),
            case.topic("f"),
            str(RESPONSE),
            jvm_args=[f"-Djava.security.krb5.conf={rendered / 'krb5.conf'}"],
        )
    said = {line.split()[0]: line.split()[1:] for line in out}
    fetches, held = map(int, said["fetches-before-any-take"])
    # one response is held by the consumer itself: a reader copying straight from it fetches once before it copies
    assert fetches >= 3, out
    assert RESPONSE < held <= 2 * RESPONSE + 500 * 2_100, out  # the bound, plus one poll of 500 records
    assert said["read"] == [str(count), "in-order", "true", "of", str(count)], out
    assert said["read-whole"] == ["true"], out
    assert said["read-inline"] == [str(count), "true"], out  # no bound: the task polls itself, as by default
    # over more partitions than a response carries whole, half are asked for first, the rest as the first is copied
    assert said["read-halves"] == [str(count), "in-order", "true", "true"], out
    whole, ms = said["stopped-mid-read"]
    assert whole == "false" and int(ms) < 10_000, out
