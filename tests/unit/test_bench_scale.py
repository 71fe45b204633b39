"""The scale benchmark's pure parts (benchmarks/scale/: runs.py, probes.py, sampler.py, report.py): what it reads from
/proc/net/tcp, a JVM's performance counters, jcmd, the KDC's log and the job's metrics file, and the table it
writes, on literal samples."""

from __future__ import annotations

import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.harness.summary import summarize
from benchmarks.scale import main as scale_main
from benchmarks.scale import probes, runs
from benchmarks.scale import report as scale_report
from benchmarks.scale.sampler import Sampler

PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D431 0100007F:9C40 01 00000000:00000000 02:000AE6A5 00000000     0        0 2001 2 0000000000000000 20 4 30 10 -1
   2: 0100007F:D432 0100007F:9C40 01 00000000:00000000 02:000AE6A5 00000000     0        0 2002 2 0000000000000000 20 4 30 10 -1
   3: 0100007F:D433 0100007F:9C4A 01 00000000:00000000 02:000AE6A5 00000000     0        0 2003 2 0000000000000000 20 4 30 10 -1
   4: 0100007F:D434 0100007F:9C4A 06 00000000:00000000 03:00001000 00000000     0        0 0 3 0000000000000000
   5: 0100007F:D435 0100007F:9C4A 01 00000000:00000000 02:000AE6A5 00000000     0        0 3005 2 0000000000000000 20 4 30 10 -1
   6: 0100007F:9C40 0100007F:D431 01 00000000:00000000 02:000AE6A5 00000000     0        0 4001 2 0000000000000000 20 4 30 10 -1
"""
PORTS = {"source": {40000}, "target": {40010}}  # 0x9C40, 0x9C4A


def test_connections_count_the_contenders_established_sockets_to_each_broker():
    sockets = probes.parse_proc_net_tcp(PROC_NET_TCP)
    assert sockets[1] == (40000, "01", 2001)
    # 2001, 2002: to the source broker; 2003: to the target; 3005 is another process's; 4001 the broker's own end
    assert probes.count_connections(sockets, {2001, 2002, 2003, 4001}, PORTS) == {"source": 2, "target": 1}
    assert probes.count_connections(sockets, set(), PORTS) == {"source": 0, "target": 0}


def test_a_listening_socket_is_known_by_its_local_port():
    listening = [
        (port, inode) for port, state, inode in probes.parse_proc_net_tcp(PROC_NET_TCP, local=True) if state == "0A"
    ]
    assert listening == [(40000, 1001)]
    assert probes.parse_proc_net_tcp(PROC_NET_TCP, local=True)[1] == (0xD431, "01", 2001)  # a connection's own end


G1_HEAP_INFO = """\
12345:
 garbage-first heap   total 262144K, used 45678K [0x00000000c0000000, 0x0000000100000000)
  region size 1024K, 20 young (20480K), 2 survivors (2048K)
 Metaspace       used 12345K, committed 12800K, reserved 1114112K
  class space    used 1234K, committed 1408K, reserved 1048576K
"""
PARALLEL_HEAP_INFO = """\
678:
 PSYoungGen      total 76288K, used 3932K [0x000000076b380000, 0x0000000770880000, 0x00000007c0000000)
  eden space 65536K, 6% used [0x000000076b380000,0x000000076b757108,0x000000076f380000)
 ParOldGen       total 175104K, used 1024K [0x00000006c1a00000, 0x00000006cc500000, 0x000000076b380000)
 Metaspace       used 2950K, committed 3072K, reserved 1056768K
"""


def test_jcmd_heap_info_gives_the_heap_not_the_metaspace():
    assert probes.parse_heap_info(G1_HEAP_INFO) == {"used": 45678 * 1024, "committed": 262144 * 1024}
    assert probes.parse_heap_info(PARALLEL_HEAP_INFO) == {
        "used": (3932 + 1024) * 1024,
        "committed": (76288 + 175104) * 1024,
    }
    assert probes.parse_heap_info("678:\nNo such process\n") == {"used": 0, "committed": 0}


def _hsperfdata(counters: dict[str, int], strings: dict[str, bytes]) -> bytes:
    """A little-endian HotSpot performance data file: the 32-byte prologue, then one entry per counter (20-byte
    header, the name, the data 8-aligned)."""
    entries = b""
    items = [(name, ord("J"), 0, struct.pack("<q", v)) for name, v in counters.items()]
    items += [(name, ord("B"), len(v), v) for name, v in strings.items()]
    for name, kind, vector, data in items:
        name_bytes = name.encode() + b"\0"
        data_at = 20 + len(name_bytes)
        data_at += -data_at % 8
        body = name_bytes.ljust(data_at - 20, b"\0") + data
        entries += struct.pack("<iiibbbbi", 20 + len(body), 20, vector, kind, 0, 1, 3, data_at) + body
    prologue = b"\xca\xfe\xc0\xc0" + bytes([1, 2, 0, 1]) + struct.pack("<iiqii", 0, 0, 0, 32, len(items))
    return prologue + entries


def test_hsperfdata_counters_give_used_and_committed_heap():
    counters = {
        "sun.gc.generation.0.space.0.used": 29360128,  # eden
        "sun.gc.generation.0.space.2.used": 996112,  # a survivor
        "sun.gc.generation.1.space.0.used": 173789184,  # old
        "sun.gc.metaspace.used": 55825504,  # not heap
        "sun.gc.generation.0.capacity": 80740376,
        "sun.gc.generation.1.capacity": 217055240,
        "sun.gc.generation.1.maxCapacity": 536870920,
    }
    parsed = probes.parse_hsperfdata(_hsperfdata(counters, {"sun.rt.javaCommand": b"kafka.Kafka\0"}))
    assert parsed == counters  # the byte-array string is skipped
    assert probes.heap_of_counters(parsed) == {"used": 204145424, "committed": 297795616}
    with pytest.raises(ValueError):
        probes.parse_hsperfdata(b"\0" * 64)


# Lines as the sandbox's krb5kdc writes them (the etype lists shortened where they repeat)
HEAD = "Nov 25 11:27:01 vm krb5kdc[7098](info):"
AS = "AS_REQ (2 etypes {aes256-cts-hmac-sha1-96(18), aes128-cts-hmac-sha1-96(17)}) 127.0.0.1:"
TGS = "TGS_REQ (4 etypes {aes256-cts-hmac-sha1-96(18), aes128-cts-hmac-sha1-96(17)}) 127.0.0.1:"
ISSUE = "ISSUE: authtime 1795606021, etypes {rep=aes256-cts-hmac-sha1-96(18), tkt=aes256-cts-hmac-sha1-96(18)},"
KDC_LOG = "\n".join(
    [
        f"{HEAD} {AS} {ISSUE} kafka/kafka.source.test@SOURCE.TEST for krbtgt/SOURCE.TEST@SOURCE.TEST",
        f"{HEAD} {AS} {ISSUE} mirror/mirror.source.test@SOURCE.TEST for krbtgt/SOURCE.TEST@SOURCE.TEST",
        f"{HEAD} {TGS} {ISSUE} mirror/mirror.source.test@SOURCE.TEST for kafka/kafka.source.test@SOURCE.TEST",
        f"{HEAD} {TGS} {ISSUE} mirror/mirror.target.test@TARGET.TEST for kafka/kafka.target.test@TARGET.TEST",
        f"{HEAD} {TGS} UNKNOWN_SERVER: authtime 0,  mirror/mirror.target.test@TARGET.TEST for "
        "kafka/wrong.target.test@TARGET.TEST, Server not found in Kerberos database",
        f"{HEAD} {TGS} {ISSUE} admin@TARGET.TEST for kafka/kafka.target.test@TARGET.TEST",
        f"{HEAD} closing down fd 14",
    ]
)
MIRROR = {"mirror/mirror.source.test@SOURCE.TEST", "mirror/mirror.target.test@TARGET.TEST"}


def test_kdc_requests_are_counted_per_kind_for_the_mirror_and_for_others():
    assert probes.kdc_requests(KDC_LOG, MIRROR) == {
        "mirror_as_req": 1,
        "mirror_as_req_refused": 0,
        "mirror_tgs_req": 3,
        "mirror_tgs_req_refused": 1,
        "others_as_req": 1,  # a broker's login
        "others_as_req_refused": 0,
        "others_tgs_req": 1,  # the harness's admin
        "others_tgs_req_refused": 0,
    }


def test_batch_phases_from_the_metrics_file_lines():
    lines = [
        {
            "batch": 0,
            "duration-ms": {"latestOffset": 900, "queryPlanning": 40, "addBatch": 5000, "triggerExecution": 6100},
        },
        {
            "batch": 1,
            "duration-ms": {"latestOffset": 300, "queryPlanning": 20, "addBatch": 3000, "triggerExecution": 3400},
        },
        {
            "batch": 2,
            "duration-ms": {"latestOffset": 100, "queryPlanning": 10, "addBatch": 1000, "triggerExecution": 1200},
        },
    ]
    phases = probes.batch_phases(lines)
    assert phases["latestOffset"] == {"median_ms": 300, "max_ms": 900, "total_ms": 1300, "batches": 3}
    assert phases["triggerExecution"]["median_ms"] == 3400
    assert "getBatch" not in phases
    older = probes.batch_phases([{"batch": 0, "batch-duration-ms": 2000}])  # a metrics file without duration-ms
    assert older == {"triggerExecution": {"median_ms": 2000, "max_ms": 2000, "total_ms": 2000, "batches": 1}}


def test_metrics_lines_skip_a_line_cut_short(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"batch": 0}\n{"batch": 1}\n{"bat')
    assert probes.metrics_lines(path) == [{"batch": 0}, {"batch": 1}]
    assert probes.metrics_lines(tmp_path / "none.jsonl") == []


def test_topic_names_spread_the_partitions_over_the_topics():
    assert runs.topic_names(1000, 1) == {"scale.p1000.t1.0": 1000}
    names = runs.topic_names(1000, 200)
    assert len(names) == 200 and set(names.values()) == {5} and "scale.p1000.t200.000" in names
    uneven = runs.topic_names(10, 4)
    assert list(uneven.values()) == [3, 3, 2, 2] and sum(uneven.values()) == 10
    with pytest.raises(ValueError):
        runs.topic_names(4, 5)


def test_brokers_are_quiet_after_three_seconds_in_a_row_under_a_tenth_of_a_cpu():
    assert not runs.quiet([])
    assert not runs.quiet([0.01, 0.02])  # too few seconds yet
    assert runs.quiet([0.9, 0.05, 0.0, 0.09])
    assert not runs.quiet([0.05, 0.0, 0.1])  # a tenth is not under a tenth
    assert not runs.quiet([0.0, 0.0, 0.0, 0.5])  # the last second counts


MOUNTS = """\
/dev/vda / ext4 rw,relatime,discard 0 0
proc /proc proc rw,nosuid 0 0
tmpfs /dev/shm tmpfs rw,relatime,size=24683656k 0 0
/dev/vdb /tmp/with\\040space xfs rw 0 0
"""


def test_a_jvm_thread_is_grouped_by_its_name():
    assert probes.thread_group("C2 CompilerThre") == "JIT compilers"
    assert probes.thread_group("C1 CompilerThre") == "JIT compilers"
    for name in ("GC Thread#0", "G1 Conc#0", "G1 Refine#0", "G1 Service", "VM Thread", "VM Periodic Tas"):
        assert probes.thread_group(name) == "garbage collector", name
    for name in ("Executor task l", "kafka-producer-", "copy-0", "main", "CompilerThread"):
        assert probes.thread_group(name) == "other threads", name


def test_a_process_is_named_by_what_it_runs():
    spark = ["/usr/lib/jvm/bin/java", "-cp", "/opt/spark/conf/:/opt/spark/jars/*", "-Xmx1g"]
    assert probes.process_name([*spark, "org.apache.spark.deploy.SparkSubmit", "--master", "local[2]"]) == (
        "java SparkSubmit"
    )
    assert probes.process_name(["java", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "CopyLimit", "a"]) == (
        "java CopyLimit"
    )
    assert probes.process_name(["java", "-jar", "/x/connect.jar", "--flag"]) == "java -jar connect.jar"
    assert probes.process_name(["java", "/tmp/Spin.java"]) == "java Spin.java"
    assert probes.process_name(["java", "-version"]) == "java"
    assert probes.process_name(["/repo/.venv/bin/python3", "-m", "secure_mirror", "run"]) == "python3"
    assert probes.process_name([]) == "?"


def test_the_cpu_before_a_moment_is_the_last_sample_taken_by_then():
    timeline = [(10.0, 0.5), (11.0, 2.0), (12.0, 3.5)]
    assert probes.cpu_before(timeline, 11.5) == 2.0
    assert probes.cpu_before(timeline, 11.0) == 2.0
    assert probes.cpu_before(timeline, 99.0) == 3.5
    assert probes.cpu_before(timeline, 9.0) is None  # no sample by then
    assert probes.cpu_before(timeline, None) is None  # no first record


def test_the_sampler_breaks_a_real_jvms_cpu_down_by_process_and_thread_group(tmp_path):
    """A real JVM that compiles a loop hot for a few seconds: its CPU lands in its threads' groups, the JIT's
    among them, and the process is named by its source file."""
    java = shutil.which("java")
    if java is None:
        pytest.fail("java is not on PATH (scripts/setup installs it)")
    source = tmp_path / "Spin.java"
    source.write_text(
        "public class Spin { public static void main(String[] a) { long end = System.nanoTime() + 3_000_000_000L;"
        " long x = 0; while (System.nanoTime() < end) { x += Long.numberOfTrailingZeros(x ^ end); }"
        " System.out.println(x); } }"
    )
    proc = subprocess.Popen([java, str(source)], stdout=subprocess.DEVNULL)
    sampler = Sampler(proc.pid, {}, interval=0.2)
    sampler.start()
    proc.wait(60)
    time.sleep(0.3)
    sampler.stop()
    cpu = sampler.cpu_breakdown()
    assert set(cpu["processes"]) == {"java Spin.java"}, cpu
    assert cpu["processes"]["java Spin.java"] >= 2.0, cpu  # the 3 s loop, sampled before the JVM ended
    assert cpu["jvm_threads"]["JIT compilers"] > 0, cpu  # compiling the source, then the loop
    assert cpu["jvm_threads"]["other threads"] >= 2.0, cpu
    assert sum(cpu["jvm_threads"].values()) <= cpu["processes"]["java Spin.java"] + 0.05, cpu
    assert [cpu_so_far for _, cpu_so_far in sampler.timeline] == sorted(
        cpu_so_far for _, cpu_so_far in sampler.timeline
    )


def test_the_sandboxs_file_system_is_that_of_the_longest_mount_point_holding_it():
    assert scale_main.file_system(MOUNTS, Path("/tmp/secure-mirror-scale-x")) == "ext4"
    assert scale_main.file_system(MOUNTS, Path("/dev/shm/secure-mirror-scale-x")) == "tmpfs"
    assert scale_main.file_system(MOUNTS, Path("/dev/shmother")) == "ext4"  # a prefix of a name is no mount point
    assert scale_main.file_system(MOUNTS, Path("/tmp/with space/x")) == "xfs"
    assert scale_main.file_system("", Path("/tmp")) == "unknown"


def _figures(**changes) -> dict:
    figures = {
        "finished": True,
        "records": 20000,
        "records_on_target_end_offsets": 20000,
        "seconds": 40.0,
        "first_record_seconds": 12.5,
        "records_per_second": 500.0,
        "steady_records_per_second": 1234.4,
        "cpu_seconds": 30.0,
        "cpu_seconds_per_million": 1500.0,
        "broker_cpu_seconds": 10.0,
        "broker_cpu_seconds_per_million": 500.0,
        "peak_heap_used_mib": 300.5,
        "peak_heap_used_mib_per_jvm": [300.5],
        "peak_heap_committed_mib": 512.0,
        "jvms": 1,
        "peak_connections": {"source": 3, "target": 4, "total": 7},
        "samples": 39,
        "sample_failures": 0,
        "kdc": probes.kdc_requests(KDC_LOG, MIRROR),
        "settle_seconds": 4.2,
        "load_average_at_start": 2.46,
    }
    return {**figures, **changes}


RESULT = {
    "command": "scripts/bench --scale --partitions-list 40 --topics-list 4 --records 20000 --seed 7",
    "seed": 7,
    "machine": {"platform": "Linux", "cpus": 2, "python": "3.11", "sandbox_file_system": "ext4"},
    "parameters": {
        "records": 20000,
        "partitions_list": [40],
        "topics_list": [4],
        "tasks": 2,
        "timeout_seconds": 600.0,
        "contenders": ["mirrormaker2", "secure_mirror_kafka_source", "secure_mirror"],
        "values": "varied JSON",
        "sample_interval_seconds": 1.0,
    },
    "sizes": [
        {
            "partitions": 40,
            "topics": 4,
            "records": 20000,
            "orders": [
                ["secure_mirror_kafka_source", "mirrormaker2", "secure_mirror"],
                ["mirrormaker2", "secure_mirror", "secure_mirror_kafka_source"],
            ],
            "load_seconds": 2.5,
            "runs": {
                "secure_mirror_kafka_source": [
                    _figures(
                        finished=False,
                        why="not finished within the time limit of 600 s",
                        records=12000,
                        batches=3,
                        job_startup_seconds=9.25,
                        batch_phases=probes.batch_phases(
                            [{"duration-ms": {"latestOffset": 900, "queryPlanning": 40, "triggerExecution": 6100}}]
                        ),
                    ),
                    _figures(records_per_second=700.0, steady_records_per_second=2000.0),
                ],
                "mirrormaker2": [
                    _figures(
                        cpu_seconds_to_first_record=6.25,
                        cpu_seconds_per_million_after_first_record=1187.5,
                        cpu_breakdown={
                            "processes": {"java MirrorMaker": 29.5, "bash": 0.48, "sed": 0.01},
                            "jvm_threads": {"JIT compilers": 7.04, "garbage collector": 1.5, "other threads": 20.96},
                            "unsampled": 0.02,
                        },
                    ),
                    _figures(records_per_second=300.0, seconds=66.7),
                ],
                "secure_mirror": [
                    {"error": "RuntimeError: the job did not start"},
                    {"error": "RuntimeError: the job did not start"},
                ],
            },
        }
    ],
}
for _size in RESULT["sizes"]:
    _size["summary"] = {name: summarize(r, scale_report.FIGURES) for name, r in _size["runs"].items()}


def test_the_markdown_is_generated_from_the_json():
    text = scale_report.markdown(RESULT)
    assert f"Command: `{RESULT['command']}` (seed 7)" in text
    assert "## 40 partitions over 4 topic(s), 20,000 records" in text
    assert (
        "order of the runs, repeat by repeat: secure_mirror_kafka_source -> mirrormaker2 -> secure_mirror; "
        "mirrormaker2 -> secure_mirror -> secure_mirror_kafka_source." in text
    )
    # the summary: medians over the finished runs, minimum to maximum in brackets
    assert "| MirrorMaker 2 | 2/2 | 53.4 (40.0 to 66.7) | 400 (300 to 500) | 1,234 (1,234 to 1,234) |" in text
    kafka = "| secure_mirror (spark kafka source), at_least_once"
    assert f"{kafka} | 1/2: not finished within the time limit of 600 s | 40.0 | 700 | 2,000 | 12.5 |" in text
    assert "| secure_mirror (mirror source), at_least_once | 0/2: RuntimeError: the job did not start | - |" in text
    # then every run
    assert f"{kafka}, run 1 | no: not finished within the time limit of 600 s | 12,000 | 40.0 | 500 |" in text
    assert "| MirrorMaker 2, run 1 | yes | 20,000 | 40.0 | 500 | 1,234 | 12.5 | 1500.0 | 500.0 |" in text
    assert "| MirrorMaker 2, run 2 | 1 | 300 (300) | 512 | 3 | 4 | 1 | 3 | 1 / 1 | 39 | 4.2 | 2.5 |" in text
    assert f"{kafka}, run 1 | 3 | 9.2 | 900 / 900 | 40 / 40 | - | - | 6,100 / 6,100 |" in text
    # where the CPU went: a run with the breakdown has a row, one without (older results) none
    cpu = "| MirrorMaker 2, run 1 | 30.0 | 6.2 | 1187.5 | 7.0 | 1.5 | 21.0 | java MirrorMaker 29.5, bash 0.5 | 0.0 |"
    assert cpu in text
    assert "| MirrorMaker 2, run 2 | 30.0 |" not in text
    error = "| secure_mirror (mirror source), at_least_once, run 2 | error: RuntimeError: the job did not start |"
    assert error in text
    header = {}
    for line in text.splitlines():  # every table row has its header's columns
        if line.startswith("| contender |") or line.startswith("| run |") or line.startswith("| the job's run |"):
            header["columns"] = line.count("|")
        elif line.startswith("| ") and header:
            assert line.count("|") == header["columns"], line


def _median(value: float) -> dict:
    return {"median": value, "min": value, "max": value, "n": 1}


def test_the_targets_are_ratios_of_medians_met_at_least_or_at_most_their_bound():
    summary = {
        "secure_mirror": {"steady_records_per_second": _median(100.0), "first_record_seconds": _median(12.0)},
        "secure_mirror_exactly_once": {"steady_records_per_second": _median(90.0)},
        "mirrormaker2": {"first_record_seconds": _median(10.0)},
        "copy_limit": {"steady_records_per_second": _median(110.0)},
    }
    rows = {r["what"]: r for r in scale_report.against_targets(summary)}
    eos = rows["exactly_once steady over at_least_once's"]
    assert eos["ratio"] == pytest.approx(0.9) and eos["met"]  # at least 0.9: 0.9 is met
    copy = rows["at_least_once steady over the copy limit's"]
    assert copy["ratio"] == pytest.approx(100 / 110) and not copy["met"]
    first = rows["the job's first record over MirrorMaker 2's (at_least_once)"]
    assert first["ratio"] == pytest.approx(1.2) and not first["met"] and not first["at_least"]
    # a target whose contenders or figure are missing is left out, not judged
    assert "exactly_once steady over MirrorMaker 2's with exactly-once" not in rows
    assert len(rows) == 3
    text = scale_report.markdown({**RESULT, "sizes": [{**RESULT["sizes"][0], "runs": {}, "summary": summary}]})
    assert "| at_least_once steady over the copy limit's | 0.91x | at least 0.95x | no |" in text


def test_the_markdown_says_what_the_jobs_driver_jvm_started_with():
    written = {
        "folder": "/w/class-cache",
        "written_by": "one unmeasured job over no topic, before the first measured job",
        "warm_up_seconds": 21.4,
        "warm_up_exit_code": 0,
        "archive_bytes": 166_793_216,
    }
    text = scale_report.markdown({**RESULT, "class_cache": written})
    assert (
        "mapped the class-data archive `secure-mirror run` keeps (secure_mirror/run/class_cache.py), 167 MB, written by "
        "one unmeasured job over no topic, before the first measured job (21 s, exit code 0). MirrorMaker 2 and the "
        "copy limit start as shipped." in text
    )
    assert "`SECURE_MIRROR_CLASS_CACHE=off`" in scale_report.markdown(
        {**RESULT, "class_cache": {"folder": "off", "written_by": "the caller"}}
    )
    assert "started without a class-data archive (no record of one" in scale_report.markdown(RESULT)


def test_the_markdown_compares_the_first_run_after_the_load_with_its_other_repeats():
    size = RESULT["sizes"][0]
    assert (
        "The first measured run, with no warm-up run: secure_mirror_kafka_source, 1,234 steady records/s, 0.62x the "
        "median of its other repeats (2,000)." in scale_report.markdown(RESULT)
    )
    warmed = {**size, "warm_up": [{"steady_records_per_second": 5000.4}]}
    assert scale_report.first_after_load(warmed).startswith(
        "The first measured run, after 1 unmeasured copy-limit run(s) (steady 5,000 records/s): "
        "secure_mirror_kafka_source, 1,234"
    )
    errored = {**size, "orders": [["secure_mirror"], ["secure_mirror"]]}
    assert scale_report.first_after_load(errored) == "The first measured run, with no warm-up run: secure_mirror.\n"
