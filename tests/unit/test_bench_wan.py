"""``scripts/bench --wan`` without a cluster: its links read from the command line (a sentence for a bad one, exit 2)
and its report made from a result."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.wan.main import latency_medians, links, wire
from benchmarks.wan.report import markdown
from secure_mirror.sandbox.wan import Link, sent_bytes


def test_the_links_are_read_in_turn_each_with_its_own_cap():
    assert links("0,25,50,100:200") == [Link(0), Link(25), Link(50), Link(100, 200.0)]
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'abc' is not RTT_MS\[:MBIT\]"):
        links("0,abc")


def _summary(steady: float) -> dict:
    one = {"median": steady, "min": steady, "max": steady, "n": 1}
    return {"runs": 1, "finished": 1, "errors": 0, "over": "finished", "steady_records_per_second": one}


def test_the_report_gives_each_link_its_round_trip_medians_and_ratios():
    result = {
        "command": "scripts/bench --wan 0,50",
        "proxy": "Toxiproxy",
        "parameters": {
            "records": 1000,
            "partitions": 6,
            "values": "JSON",
            "tasks": 2,
            "repeats": 1,
            "seed": 7,
            "latency_rate": 200.0,
            "latency_records": 100,
            "warm_ups": 1,
        },
        "links": [
            {
                "link": {"rtt_ms": rtt, "mbit": None, "text": str(rtt)},
                "measured_round_trip": {"k:1": {"ms": rtt + 1.5, "samples": [rtt + 1.5]}},
                "summary": {
                    "mirrormaker2": _summary(100.0 - rtt),
                    "secure_mirror": _summary(200.0 - rtt),
                    "secure_mirror_exactly_once": _summary(180.0 - rtt),
                },
                "latency": {
                    "secure_mirror": {"samples": 10, "p50_ms": 300.0, "p99_ms": 400.0, "p99_each_ms": [400.0, 420.0]}
                },
            }
            for rtt in (0, 50)
        ],
    }
    text = markdown(result)
    assert "1 unmeasured copy-limit run(s) before the first link's" in text
    assert "### 50 (round trip measured: k:1 51.5 ms)" in text
    assert "| secure_mirror (mirror source), at_least_once | 150 | - | - | - | 1 (0) |" in text
    assert "| secure_mirror (mirror source), at_least_once | 1.00x | 0.75x |" in text
    assert "| 50 | 0.87x | 3.00x | - |" in text
    assert "| secure_mirror (mirror source), at_least_once | 300 | 400 | 10 | 400, 420 |" in text


def test_latency_medians_are_over_the_runs_that_measured_each_contender():
    runs = [
        {"mirrormaker2": {"samples": 5, "p50_ms": 90.0, "p99_ms": 700.0}, "secure_mirror_continuous": {"error": "x"}},
        {"error": "RuntimeError: no latency samples"},
        {"mirrormaker2": {"samples": 5, "p50_ms": 80.0, "p99_ms": 170.0}, "secure_mirror_continuous": {"error": "y"}},
        {"mirrormaker2": {"samples": 5, "p50_ms": 85.0, "p99_ms": 180.0}},
    ]
    medians = latency_medians(runs)
    assert medians["mirrormaker2"] == {
        "p50_ms": 85.0,
        "p99_ms": 180.0,
        "samples": 15,
        "runs": 3,
        "p99_each_ms": [700.0, 170.0, 180.0],
    }
    assert medians["secure_mirror_continuous"] == {"error": "x"}
    assert latency_medians([{"error": "e"}]) == {"error": "e"} and latency_medians([]) == {}


def test_a_runs_link_rate_is_taken_while_the_link_was_busy():
    # 1 s idle at the start, 10 s at 5 MB/s (40 Mbit/s), 1 s idle at the end; samples every 0.5 s
    samples, sent = [], 1_000
    for step in range(25):
        t = step * 0.5
        if 1.0 < t <= 11.0:
            sent += 2_500_000
        samples.append((t, sent))
    figures = wire(samples, 100_000)
    assert figures["link_bytes"] == 50_000_000.0 and figures["link_bytes_per_record"] == 500.0
    assert figures["steady_link_mbit"] == pytest.approx(40.0, rel=0.01)
    assert "steady_link_mbit" not in wire([(0.0, 5), (1.0, 5)], 10)


def test_the_bytes_a_class_sent_are_read_from_tc():
    shown = "class htb 5a4d:1 root prio 0 rate 50Mbit\n Sent 1258914358 bytes 28532 pkt (dropped 0, overlimits 9997)\n"
    assert sent_bytes(shown) == 1258914358 and sent_bytes("") is None
