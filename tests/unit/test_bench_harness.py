"""The benchmark harness's shared, pure parts: the one table of contenders both harnesses run
(benchmarks/harness/contenders.py), MirrorMaker 2's exactly-once properties and grants, the one way a contender writing
in transactions is counted (benchmarks/harness/committed.py, reading.count_committed over a stand-in consumer), and the
one summary of repeats (benchmarks/harness/summary.py), as the scale benchmark and the comparison give it."""

from __future__ import annotations

import subprocess
import threading
import time

import pytest
from confluent_kafka import KafkaError

from benchmarks import recordings
from benchmarks.comparison.main import medians
from benchmarks.harness import committed, contenders, launch, reading
from benchmarks.harness.bench import class_cache_warm_up
from benchmarks.harness.summary import summarize
from benchmarks.scale import report as scale_report
from secure_mirror import paths
from secure_mirror.profile import load_profile
from secure_mirror.render.mm2 import mm2_properties
from secure_mirror.render.spark import source_options
from tests.support import profiles as pf


# ---- one table of contenders ------------------------------------------------------------------------------------
def test_both_harnesses_know_every_contender_of_the_one_table():
    assert contenders.DEFAULT == [
        "copy_limit",
        "mirrormaker2",
        "mirrormaker2_exactly_once",
        "secure_mirror",
        "secure_mirror_exactly_once",
    ]
    assert contenders.names(",".join(contenders.CONTENDERS)) == list(contenders.CONTENDERS)
    assert contenders.names(" mirrormaker2_exactly_once, secure_mirror ") == [
        "mirrormaker2_exactly_once",
        "secure_mirror",
    ]
    with pytest.raises(Exception, match="unknown contender.*mm2.*known: copy_limit, mirrormaker2"):
        contenders.names("mm2")
    assert scale_report.LABELS is contenders.LABELS


def test_a_copy_limit_variant_replaces_one_setting_by_a_jvm_option_before_the_class(tmp_path):
    variants = {n: c for n, c in contenders.CONTENDERS.items() if c.jvm_options}
    assert sorted(variants) == ["copy_limit_1mib_batches", "copy_limit_c2_only", "copy_limit_max_poll_10000"]
    assert all(c.runs == "copy_limit" and not c.default for c in variants.values())
    assert variants["copy_limit_max_poll_10000"].jvm_options == ("-Dcopylimit.consumer.max.poll.records=10000",)
    assert variants["copy_limit_1mib_batches"].jvm_options == ("-Dcopylimit.producer.batch.size=1048576",)
    assert variants["copy_limit_c2_only"].jvm_options == ("-XX:-TieredCompilation",)  # a JVM flag, not a setting
    argv = launch.copy_limit_argv(tmp_path, tmp_path, ["a"], 2, variants["copy_limit_1mib_batches"].jvm_options)
    assert argv.index("-Dcopylimit.producer.batch.size=1048576") < argv.index("CopyLimit")
    assert not any(a.startswith("-Dcopylimit.") for a in launch.copy_limit_argv(tmp_path, tmp_path, ["a"], 2))


def test_a_job_variant_adds_its_spark_conf_to_the_profiles():
    variants = {n: c for n, c in contenders.CONTENDERS.items() if c.spark_conf}
    assert sorted(variants) == [
        "secure_mirror_2g",
        "secure_mirror_c2_only",
        "secure_mirror_exactly_once_fetch_ahead",
        "secure_mirror_fetch_ahead",
        "secure_mirror_fetch_ahead_2g",
        "secure_mirror_fetch_ahead_small",
        "secure_mirror_parallel_gc",
        "secure_mirror_spark_ui",
    ]
    assert all(c.runs == "job" and not c.default for c in variants.values())
    data: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {"conf": {"spark.executor.cores": 1}}}}
    contenders.profile_edit("secure_mirror_spark_ui", 2)(data)
    assert data["mirror"]["spark"]["conf"] == {"spark.executor.cores": 1, "spark.ui.enabled": "true"}
    plain: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {}}}
    contenders.profile_edit("secure_mirror", 2)(plain)
    assert "conf" not in plain["mirror"]["spark"]


def test_the_class_data_archive_is_warmed_by_the_plain_job_whichever_contender_runs_first():
    # A variant's class path or JVM options would make the archive its own, and every other job would start without
    # one (NOTES section 22).
    data: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {"conf": {"spark.executor.cores": 1}}}}
    contenders.profile_edit("secure_mirror_parallel_gc", 2)(data)
    assert data["mirror"]["spark"]["conf"]["spark.driver.extraJavaOptions"] == "-XX:+UseParallelGC"
    variant = contenders.CONTENDERS["secure_mirror_parallel_gc"].spark_conf_keys()
    class_cache_warm_up(variant)(data)
    assert data["mirror"]["spark"]["conf"] == {"spark.executor.cores": 1}  # the profile's own conf stays
    assert data["mirror"]["topics"] == {"include": "secure-mirror-class-cache-warm-up"}
    plain: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {}}}
    contenders.profile_edit("secure_mirror", 2)(plain)
    class_cache_warm_up(contenders.CONTENDERS["secure_mirror"].spark_conf_keys())(plain)
    assert "conf" not in plain["mirror"]["spark"]


def test_a_flight_recording_places_samples_between_safepoints_and_records_every_compilation(tmp_path):
    # The options as the harness gives them to a JVM, read by this machine's Java: it starts, writes the recording
    # at exit, and every compilation is in it, the shortest too, as benchmarks/recordings.py reads them back.
    recording = tmp_path / "run.jfr"
    options = launch.jfr_options(recording)
    assert options[:2] == ("-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints")
    started = subprocess.run(
        [paths.java_executable(), *options, "-XX:+PrintFlagsFinal", "-version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr[-2000:]
    flag = next(line for line in started.stdout.splitlines() if " DebugNonSafepoints " in line)
    assert flag.split()[3] == "true", flag
    compiled = recordings.compilations(recording)
    assert len(compiled) > 20 and min(took for _, _, took in compiled) < 0.1  # profile alone keeps those over 100 ms
    assert {compiler for _, compiler, _ in compiled} <= {"c1", "c2"}
    assert recordings.compile_seconds(compiled)["the JDK"] > 0  # java -version compiles the JDK's own code


def test_the_profile_of_a_job_holds_its_tasks_source_and_guarantee():
    data: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {"master": "local[2]"}}}
    contenders.profile_edit("secure_mirror_exactly_once", 4)(data)
    assert data["mirror"]["spark"] == {"master": "local[4]", "source": "mirror", "tasks": 4}
    assert data["mirror"]["delivery"] == {"guarantee": "exactly_once"}
    assert data["mirror"]["mm2"] == {"properties": {"tasks.max": 4}}
    kafka: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {}}}
    contenders.profile_edit("secure_mirror_kafka_source", 2)(kafka)
    assert kafka["mirror"]["spark"] == {"master": "local[2]", "source": "kafka"} and "delivery" not in kafka["mirror"]


def test_mirrormaker2_with_exactly_once_is_mirrormaker2_with_kip_618_on_and_no_job_guarantee():
    data: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {}}}
    contenders.profile_edit("mirrormaker2_exactly_once", 2)(data)
    assert data["mirror"]["mm2"] == {
        "properties": {
            "tasks.max": 2,
            "tgt.exactly.once.source.support": "enabled",
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": "http://localhost:0",
        }
    }
    assert "delivery" not in data["mirror"]  # the job's guarantee is not MirrorMaker 2's
    plain: dict = {"target": {"alias": "tgt"}, "mirror": {"spark": {}}}
    contenders.profile_edit("mirrormaker2", 2)(plain)
    assert plain["mirror"]["mm2"] == {"properties": {"tasks.max": 2}}


def test_the_rendered_mm2_properties_of_mirrormaker2_with_exactly_once(tmp_path):
    """What the harness runs MirrorMaker 2 with: render's mm2.properties of the edited profile, written by the
    project's Java properties encoder; the source consumer reads read_committed, as Kafka's page asks."""
    data = pf.profile_data(tmp_path)
    contenders.profile_edit("mirrormaker2_exactly_once", 2)(data)
    text = mm2_properties(load_profile(pf.write_profile(tmp_path, data)), "mm2/mm2.properties")
    lines = set(text.splitlines())
    for line in (
        "tgt.exactly.once.source.support=enabled",
        "dedicated.mode.enable.internal.rest=true",
        "listeners=http://localhost:0",
        "src.consumer.isolation.level=read_committed",
        "tasks.max=2",
        "src->tgt.enabled=true",
    ):
        assert line in lines
    assert not [line for line in lines if "exactly.once" in line and not line.startswith("tgt.")]


def test_mirrormaker2_with_kafkas_defaults_puts_back_kafkas_client_settings_over_renders(tmp_path):
    """``scripts/bench --wan``'s MirrorMaker 2 as most users run it: the lines render writes from the profile are
    overridden by Kafka 4.2's own defaults, each once, the last word in mm2.properties."""
    data = pf.profile_data(tmp_path)
    contenders.profile_edit("mirrormaker2_kafka_defaults", 2)(data)
    text = mm2_properties(load_profile(pf.write_profile(tmp_path, data)), "mm2/mm2.properties")
    settings = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert {key: settings[key] for key in ("src.consumer.receive.buffer.bytes", "tgt.producer.batch.size")} == {
        "src.consumer.receive.buffer.bytes": "65536",
        "tgt.producer.batch.size": "16384",
    }
    assert (settings["tgt.producer.linger.ms"], settings["tgt.producer.compression.type"]) == ("5", "none")
    assert sum(line.startswith("tgt.producer.batch.size=") for line in text.splitlines()) == 1


def test_the_job_with_the_copy_limits_settings_is_a_valid_profile_whose_clients_get_them(tmp_path):
    data = pf.profile_data(tmp_path)
    contenders.profile_edit("secure_mirror_loop_settings", 2)(data)
    profile = load_profile(pf.write_profile(tmp_path, data))
    assert (profile.mirror.delivery.batch_size, profile.mirror.delivery.linger_ms) == (1_048_576, 100)
    assert profile.mirror.delivery.guarantee == "at_least_once"
    assert profile.source.client_options["max.poll.records"] == 10_000
    assert profile.target.client_options["buffer.memory"] == 192 * 1_048_576
    assert "secure_mirror_loop_settings" not in contenders.DEFAULT


def test_the_job_with_its_old_sizes_sets_both_where_the_job_would_size_them(tmp_path):
    plain, fixed = pf.profile_data(tmp_path), pf.profile_data(tmp_path)
    contenders.profile_edit("secure_mirror", 2)(plain)
    contenders.profile_edit("secure_mirror_fixed_sizes", 2)(fixed)
    plain_profile = load_profile(pf.write_profile(tmp_path, plain))
    assert plain_profile.mirror.delivery.batch_size is None
    assert "max.partition.fetch.bytes" not in plain_profile.source.client_options
    profile = load_profile(pf.write_profile(tmp_path, fixed))
    assert profile.mirror.delivery.batch_size == 262_144
    assert profile.source.client_options["max.partition.fetch.bytes"] == 1_048_576
    assert "secure_mirror_fixed_sizes" not in contenders.DEFAULT


@pytest.mark.parametrize("name", ["secure_mirror_exactly_once_loop_settings", "mirrormaker2_loop_settings"])
def test_the_other_contenders_with_the_copy_limits_settings_get_them_too(tmp_path, name):
    data = pf.profile_data(tmp_path)
    contenders.profile_edit(name, 2)(data)
    profile = load_profile(pf.write_profile(tmp_path, data))
    assert (profile.mirror.delivery.batch_size, profile.mirror.delivery.linger_ms) == (1_048_576, 100)
    assert profile.mirror.delivery.exactly_once == name.startswith("secure_mirror_exactly_once")
    lines = set(mm2_properties(profile, "mm2/mm2.properties").splitlines())
    for line in ("tgt.producer.batch.size=1048576", "tgt.producer.linger.ms=100", "src.max.poll.records=10000"):
        assert line in lines
    assert f"tgt.buffer.memory={192 * 1_048_576}" in lines
    assert name not in contenders.DEFAULT


@pytest.mark.parametrize("name", ["secure_mirror_kafka_socket_buffers", "mirrormaker2_kafka_socket_buffers"])
def test_the_contenders_with_kafkas_socket_buffers_read_the_source_with_them(tmp_path, name):
    data = pf.profile_data(tmp_path)
    contenders.profile_edit(name, 2)(data)
    profile = load_profile(pf.write_profile(tmp_path, data))
    assert profile.source.client_options["receive.buffer.bytes"] == 65536
    assert "receive.buffer.bytes" not in profile.target.client_options
    lines = mm2_properties(profile, "mm2/mm2.properties").splitlines()
    assert [line for line in lines if "receive.buffer" in line] == ["src.receive.buffer.bytes=65536"]
    assert profile.mirror.delivery.guarantee == "at_least_once"
    assert name not in contenders.DEFAULT


def test_mirrormaker2_with_exactly_once_is_granted_its_transactional_ids():
    acls = contenders.mm2_exactly_once_acls("src", ("User:mirror",))
    assert {(a["resource_name"], a["pattern_type"], a["operation"]) for a in acls} == {
        ("connect-cluster-src-mm2", "LITERAL", "WRITE"),
        ("connect-cluster-src-mm2", "LITERAL", "DESCRIBE"),
        ("src-mm2-", "PREFIXED", "WRITE"),
        ("src-mm2-", "PREFIXED", "DESCRIBE"),
    }
    assert {a["resource_type"] for a in acls} == {"TRANSACTIONAL_ID"} and {a["principal"] for a in acls} == {
        "User:mirror"
    }


# ---- the one way a transactional contender is counted -----------------------------------------------------------
A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def test_only_offsets_below_the_last_stable_offset_and_not_read_yet_are_read():
    assert committed.unread({A0: 10, A1: 0, B0: 7}, {}) == {A0: (0, 10), B0: (0, 7)}
    assert committed.unread({A0: 15, A1: 4, B0: 7}, {A0: 10, B0: 7}) == {A0: (10, 15), A1: (0, 4)}


def test_reading_waits_until_the_offsets_left_could_hold_the_records_missing():
    # 100 records wanted, 60 counted: 30 offsets left cannot hold the 40 missing (markers take offsets too)
    assert not committed.worth_reading(100, 60, {A0: (50, 70), A1: (0, 10)})
    assert committed.worth_reading(100, 60, {A0: (50, 70), A1: (0, 20)})
    assert committed.worth_reading(100, 100, {})


class _Reader:
    def __init__(self, sees: int):
        self.sees, self.counted, self.asked = sees, 7, 0

    def seen(self, records=None):
        self.asked += 1
        return self.sees


def test_a_contender_without_transactions_counts_its_end_offsets_one_with_what_read_committed_sees():
    assert committed.on_target(100, 100, None) == 100
    reader = _Reader(sees=98)
    # fewer end offsets than records: no reading, the count so far
    assert committed.on_target(100, 99, reader) == 7 and reader.asked == 0  # type: ignore[arg-type]
    # the end offsets hold N with the markers, a read_committed reader sees 98: not finished
    assert committed.on_target(100, 140, reader) == 98 and reader.asked == 1  # type: ignore[arg-type]


class _Error:
    def __init__(self, code):
        self._code = code

    def code(self):
        return self._code


class _Message:
    def __init__(self, tp, offset, error=None):
        self.tp, self._offset, self._error = tp, offset, error

    def topic(self):
        return self.tp[0]

    def partition(self):
        return self.tp[1]

    def offset(self):
        return self._offset

    def error(self):
        return self._error


class _Consumer:
    """Hands out what a read_committed consumer would, one poll after the other."""

    def __init__(self, polls):
        self.polls, self.paused, self.assigned, self.assignments = list(polls), [], [], []

    def assign(self, partitions):
        self.assigned = [(tp.topic, tp.partition, tp.offset) for tp in partitions]
        self.assignments.append(self.assigned)

    def consume(self, count, timeout):
        return self.polls.pop(0) if self.polls else []

    def pause(self, partitions):
        self.paused += [(tp.topic, tp.partition) for tp in partitions]

    def resume(self, partitions):
        self.resumed = [(tp.topic, tp.partition) for tp in partitions]

    def unassign(self):
        self.assigned = []


def test_a_reading_counts_the_committed_records_of_each_range_and_stops_at_its_end():
    eof = _Error(KafkaError._PARTITION_EOF)
    polls = [
        # A0 [10, 15): records 10 to 12, 13 aborted (never delivered), 14 a commit marker (never delivered): done at
        # its end; A1 [0, 3): 0 to 2, then a record of a later transaction (3), not counted
        [_Message(A0, 10), _Message(A0, 11), _Message(A1, 0), _Message(A0, 12)],
        [_Message(A1, 1), _Message(A1, 2), _Message(A1, 3), _Message(A0, 15, eof)],
    ]
    consumer = _Consumer(polls)
    assert reading.count_committed(consumer, {A0: (10, 15), A1: (0, 3)}) == 6
    assert consumer.assignments == [[("a", 0, 10), ("a", 1, 0)]]  # from where each range starts
    assert sorted(consumer.paused) == [A0, A1] and consumer.assigned == []
    assert sorted(consumer.resumed) == [A0, A1]  # the next reading's assignment must not find them paused


def test_a_reading_that_does_not_reach_the_end_fails_after_its_time():
    with pytest.raises(RuntimeError, match="1 target partitions not read to their last stable offset"):
        reading.count_committed(_Consumer([]), {A0: (0, 5)}, timeout=0.0)


# ---- medians of the repeats with their spread --------------------------------------------------------------------
def test_each_figure_is_summarized_by_its_median_minimum_and_maximum_over_the_finished_runs():
    runs = [
        {"finished": True, "records_per_second": 300.0, "seconds": 10.0},
        {"finished": True, "records_per_second": 100.0, "seconds": 30.0},
        {"finished": False, "why": "not finished", "records_per_second": 5.0, "seconds": 600.0},
        {"error": "RuntimeError: no"},
        {"finished": True, "records_per_second": 200.0, "seconds": 15.0, "first_record_seconds": None},
    ]
    summary = summarize(runs, scale_report.FIGURES)
    assert summary["runs"] == 5 and summary["finished"] == 3 and summary["errors"] == 1
    assert summary["records_per_second"] == {"median": 200.0, "min": 100.0, "max": 300.0, "n": 3}
    assert summary["seconds"] == {"median": 15.0, "min": 10.0, "max": 30.0, "n": 3}
    assert "first_record_seconds" not in summary and summary["over"] == "finished"
    none_finished = summarize([runs[2], runs[3]], scale_report.FIGURES)
    assert none_finished["over"] == "unfinished" and none_finished["records_per_second"]["median"] == 5.0


def test_the_comparison_gives_the_same_summary_as_its_results_name_it():
    samples = [
        {"records_per_second": 300.0, "steady_records_per_second": 30.0, "job_startup_seconds": 5.0},
        {"records_per_second": 100.0, "steady_records_per_second": 10.0},
        {"records_per_second": 200.0, "steady_records_per_second": 20.0},
    ]
    summary = medians(samples)
    assert summary == {
        "median_records_per_second": 200.0,
        "min": 100.0,
        "max": 300.0,
        "runs": samples,
        "median_steady_records_per_second": 20.0,
    }
    assert list(summary) == ["median_records_per_second", "min", "max", "runs", "median_steady_records_per_second"]
    # a figure not every run has is left out, as before (job_startup_seconds of a run without a metrics file)


def test_a_reader_whose_close_hangs_is_left_after_the_timeout(capsys):
    release = threading.Event()

    class Hanging:
        closed = False

        def close(self):
            release.wait(10)
            Hanging.closed = True

    reader = committed.ReadCommitted({}, {"t": 1})
    reader._consumer = Hanging()
    started = time.monotonic()
    reader.close(timeout=0.2)
    assert time.monotonic() - started < 5 and reader._consumer is None and not Hanging.closed
    assert "did not close in 0 s; left" in capsys.readouterr().err
    release.set()


def test_the_contender_with_a_short_fetch_wait_reads_the_source_with_it(tmp_path):
    data = pf.profile_data(tmp_path)
    contenders.profile_edit("secure_mirror_short_fetch_wait", 2)(data)
    profile = load_profile(pf.write_profile(tmp_path, data))
    options = source_options(profile)
    assert (options["kafka.fetch.max.wait.ms"], options["kafka.receive.buffer.bytes"]) == ("10", "-1")
    assert profile.mirror.spark.source == "mirror" and profile.mirror.delivery.guarantee == "at_least_once"
    assert "secure_mirror_short_fetch_wait" not in contenders.DEFAULT
