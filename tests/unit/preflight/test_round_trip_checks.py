"""``source.kafka.round-trip`` judged from answer dicts (checks/round_trip.py): the round trips measured, the windows
the consumer's settings leave a connection, and a warning with the figures when one caps it below the link; never a
failure."""

from __future__ import annotations

from pathlib import Path

from secure_mirror.preflight.checks.round_trip import ceilings, round_trip_check
from secure_mirror.preflight.model import PASS, SKIPPED, WARN
from secure_mirror.preflight.probes.round_trip import receive_buffer_max

JOB = {"receive.buffer.bytes": "-1"}  # the job's defaults (profile.SOURCE_JAVA_CONSUMER_DEFAULTS)
KERNEL = 32 * 1024 * 1024


def test_at_loopback_the_windows_play_no_part():
    found = round_trip_check("source", {"b:1": {"ms": 0.2, "samples": [0.3, 0.2, 0.4]}}, JOB, KERNEL)
    assert found.status == PASS and found.id == "source.kafka.round-trip"
    assert found.finding == (
        "round trip b:1 0.2 ms; at 0.2 ms each consumer connection can carry 1,342,177 Mbit/s (receive.buffer.bytes "
        "-1 (the kernel's tcp_rmem maximum) 33,554,432 bytes a round trip): a round trip this short leaves the "
        "windows no part to play"
    )


def test_the_jobs_defaults_fill_a_gigabit_link_at_100_ms():
    found = round_trip_check("source", {"b:1": {"ms": 100.0, "samples": [100.0]}}, JOB, KERNEL)
    assert found.status == PASS
    assert found.details["ceilings_mbit"] == {
        "fetch.max.bytes": 4194,
        "receive.buffer.bytes -1 (the kernel's tcp_rmem maximum)": 2684,
    }


def test_kafkas_default_receive_buffer_and_a_small_fetch_warn_with_the_bandwidth_delay_product():
    answers = {"b:1": {"ms": 48.0, "samples": [50.0, 48.0]}, "b:2": {"ms": 50.0, "samples": [50.0]}}
    settings = {"fetch.max.bytes": "1048576", "receive.buffer.bytes": "65536", "max.partition.fetch.bytes": "1048576"}
    found = round_trip_check("source", answers, settings, KERNEL)
    assert found.status == WARN
    assert found.finding == (
        "round trip b:1 48.0 ms, b:2 50.0 ms; at 50.0 ms fetch.max.bytes 1,048,576 bytes caps each connection at "
        "168 Mbit/s; receive.buffer.bytes 65,536 bytes caps each connection at 10 Mbit/s; max.partition.fetch.bytes "
        "1,048,576 bytes caps each partition at 168 Mbit/s, below a 1,000 Mbit/s link"
    )
    assert found.fix == (
        "a 1,000 Mbit/s link at 50.0 ms holds 6,250,000 bytes in flight (its bandwidth-delay product): set "
        "source.client_options.fetch.max.bytes to at least 6,250,000; set source.client_options.receive.buffer.bytes "
        "to at least 6,250,000; set source.client_options.max.partition.fetch.bytes to at least 6,250,000"
    )


def test_a_kernel_that_keeps_buffers_small_is_named_with_its_sysctl():
    found = round_trip_check("source", {"b:1": {"ms": 100.0, "samples": [100.0]}}, JOB, 4 * 1024 * 1024)
    assert found.status == WARN
    assert "raise the kernel's net.ipv4.tcp_rmem maximum (sysctl) to at least 12,500,000" in found.fix


def test_a_slower_link_given_passes_what_a_gigabit_one_would_not():
    settings = {"fetch.max.bytes": "1048576", "receive.buffer.bytes": "-1"}
    assert round_trip_check("source", {"b:1": {"ms": 50.0, "samples": [50.0]}}, settings, KERNEL).status == WARN
    assert (
        round_trip_check("source", {"b:1": {"ms": 50.0, "samples": [50.0]}}, settings, KERNEL, link_mbit=100).status
        == PASS
    )


def test_brokers_not_measured_are_named_and_none_measured_skips():
    answers = {"b:1": {"error": "connection refused"}, "b:2": {"ms": 10.0, "samples": [10.0]}}
    found = round_trip_check("source", answers, JOB, KERNEL)
    assert found.status == PASS and found.details["unmeasured"] == {"b:1": "connection refused"}
    skipped = round_trip_check("source", {"b:1": {"error": "timed out"}}, JOB, KERNEL)
    assert skipped.status == SKIPPED
    assert skipped.finding == "skipped: no broker's round trip could be measured (b:1: timed out)"


def test_the_ceilings_read_the_settings_as_kafka_would():
    assert [c.setting for c in ceilings({}, None)] == ["fetch.max.bytes", "receive.buffer.bytes"]
    assert ceilings({}, None)[1].window == 64 * 1024  # Kafka's default receive.buffer.bytes
    assert [c.setting for c in ceilings({"receive.buffer.bytes": "-1"}, None)] == ["fetch.max.bytes"]


def test_the_kernels_most_is_read_from_tcp_rmem(tmp_path):
    path = tmp_path / "tcp_rmem"
    path.write_text("4096\t131072\t6291456\n")
    assert receive_buffer_max(path) == 6291456
    assert receive_buffer_max(tmp_path / "missing") is None
    assert receive_buffer_max(Path("/proc/sys/net/ipv4/tcp_rmem")) is None or receive_buffer_max() > 0
