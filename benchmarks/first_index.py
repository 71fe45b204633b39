"""What a partition's first offset-index entry costs the target broker, and who pays it (issue 26, NOTES section 8).

    scripts/bench --first-index [--partitions N] [--sandbox DIR] [--out DIR]

A Kafka broker writes an index entry for an append when more than ``index.interval.bytes`` (4,096) were appended
to the segment since its last entry: a segment's first append writes none, its second writes the first. The index
files are preallocated sparse and memory-mapped, so the first entry touches a page no write has touched. Each case
below runs on fresh topics of N partitions on the sandbox's target broker (one broker, as in ``--scale``), with
about 60 KB per partition (60 records of 1,000 bytes, one producer batch each):

- ``one_append``: one batch per partition (idempotent producer): produce and flush;
- ``second_append``: the same again on those partitions: the first index entries, written by data;
- ``transaction``: one batch per partition in one transaction, then the commit: the first index entries, written
  by the commit markers (timed from ``commitTransaction`` to the last stable offsets reaching the end offsets);
- ``second_transaction``: the same again on those partitions: markers with no first index entry left to write.

Per case: seconds and milliseconds per partition. Results: ``<out>/first-index.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.harness import admin, cli, provenance, read_ahead, reading
from benchmarks.harness.results import write_results
from secure_mirror.kafka import admin_ops
from secure_mirror.sandbox import Sandbox

RECORDS_PER_PARTITION = 60
VALUE = b"x" * 1000


log = cli.prefixed("first-index")


def producer(conf: dict, transactional_id: str | None = None):
    from confluent_kafka import Producer

    settings = {
        **conf,
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 20,
        "batch.size": 1_000_000,  # a partition's 60 KB in one batch
        "queue.buffering.max.kbytes": 2_097_151,
        "queue.buffering.max.messages": 2_000_000,
    }
    if transactional_id:
        settings["transactional.id"] = transactional_id
    return Producer(settings)


def write_round(p, topic: str, partitions: int) -> None:
    for partition in range(partitions):
        for _ in range(RECORDS_PER_PARTITION):
            p.produce(topic, value=VALUE, partition=partition)
        p.poll(0)
    if p.flush(300) != 0:
        raise RuntimeError("records not acknowledged within 300 s")


def wait_stable(conf: dict, topic: str, partitions: int, limit: float = 600.0) -> None:
    """Until no transaction is open on ``topic``: its last stable offsets equal its end offsets."""
    deadline = time.monotonic() + limit
    listed = [(topic, p) for p in range(partitions)]
    while reading.partition_end_offsets(conf, listed, stable=True) != reading.partition_end_offsets(conf, listed):
        if time.monotonic() > deadline:
            raise RuntimeError(f"transactions on {topic} still open after {limit:.0f} s")
        time.sleep(0.1)


def plain(conf: dict, partitions: int) -> dict[str, float]:
    topic = f"first-index.plain.{uuid.uuid4().hex[:8]}"
    admin_ops.create_topics(conf, {topic: partitions}, timeout=120)
    p = producer(conf)
    out = {}
    try:
        for case in ("one_append", "second_append"):
            started = time.monotonic()
            write_round(p, topic, partitions)
            out[case] = time.monotonic() - started
    finally:
        p.flush(30)
        admin.delete_and_wait(conf, [topic])
    return out


def transactional(conf: dict, partitions: int) -> dict[str, float]:
    topic = f"first-index.txn.{uuid.uuid4().hex[:8]}"
    admin_ops.create_topics(conf, {topic: partitions}, timeout=120)
    p = producer(conf, f"secure-mirror-first-index-{uuid.uuid4().hex[:8]}")
    out = {}
    try:
        p.init_transactions(60)
        for case in ("transaction", "second_transaction"):
            p.begin_transaction()
            write_round(p, topic, partitions)
            started = time.monotonic()
            p.commit_transaction(120)
            wait_stable(conf, topic, partitions)
            out[case] = time.monotonic() - started
    finally:
        admin.delete_and_wait(conf, [topic])
    return out


def markdown(result: dict) -> str:
    n = result["partitions"]
    lines = [
        "# A partition's first index entry",
        "",
        f"Command: `{result['command']}`",
        "",
        f"{n:,} partitions on the sandbox's target broker, {RECORDS_PER_PARTITION} records of {len(VALUE):,} bytes "
        f"per partition and round (one batch), SASL_SSL + GSSAPI; {result['machine']['platform']}, "
        f"{result['machine']['cpus']} CPUs; {read_ahead.sentence(result['machine'].get('sandbox_disk'))}. "
        "See benchmarks/first_index.py for what each case times.",
        "",
        "| case | seconds | ms per partition |",
        "| --- | --- | --- |",
    ]
    for case, seconds in result["cases"].items():
        lines.append(f"| {case} | {seconds:.1f} | {seconds / n * 1000:.2f} |")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, command: str) -> dict:
    result = {
        "build": provenance.build(),  # the checkout the run starts from: the code it measures
        "command": command,
        "partitions": args.partitions,
        "machine": provenance.machine(),
        "cases": {},
    }
    work = Path(tempfile.mkdtemp(prefix="secure-mirror-first-index-"))
    folder = Path(args.sandbox).resolve() if args.sandbox else work
    try:
        with read_ahead.set_for(folder, args.read_ahead_kb, Path("/proc/mounts").read_text()) as disk:
            result["machine"]["sandbox_disk"] = disk
            log(f"the sandbox's disk: {json.dumps(disk)}")
            measure(args, result, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def measure(args: argparse.Namespace, result: dict, work: Path) -> None:
    sb = Sandbox.load(args.sandbox) if args.sandbox else Sandbox.up(work / "sandbox")
    os.environ.update({"KRB5_CONFIG": str(sb.krb5_conf), "KRB5CCNAME": f"DIR:{work / 'cc'}"})
    (work / "cc").mkdir(exist_ok=True)
    try:
        conf = sb.client_conf("target", "admin")
        for name, case in (("plain", plain), ("transactional", transactional)):
            log(f"{name}: {args.partitions} partitions")
            result["cases"].update(case(conf, args.partitions))
    finally:
        admin.drop_kept()
        if not args.sandbox:
            sb.down()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=2500, help="partitions of each fresh topic (2500)")
    cli.add_sandbox_option(parser)
    cli.add_out_option(parser)
    cli.add_read_ahead_option(parser)
    args = parser.parse_args(argv)
    cli.stop_on_sigterm()
    result = run(args, " ".join(["scripts/bench", "--first-index", *cli.given(argv)]))
    print(write_results(args.out, "first-index", result, markdown(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
