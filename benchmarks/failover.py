"""Failover (issue 28): how many records a consumer group reads again, or skips, on the target, and how long its
commit on the source takes to reach the target, secure_mirror against MirrorMaker 2, on the sandbox.

    scripts/bench --failover [--seed N] [--sandbox DIR] [--out DIR]

For each contender (secure_mirror in at_least_once and exactly_once with ``mirror.groups`` selecting the group, its
sync interval the default; MirrorMaker 2 with ``emit.checkpoints.enabled`` and ``sync.group.offsets.enabled``, its
intervals the defaults, from the mm2.properties that ``render`` writes), one after another, each with a source topic,
a consumer group and a source alias of its own (so no two write the same target topics, checkpoints or map):

1. a source topic of 6 partitions written by a transactional producer that aborts some transactions, with plain
   records between (the layout seeded, the same in every partition; each value names its partition and record);
2. the group commits offset 0 everywhere before the mirror starts (MirrorMaker 2 lists the groups when it starts and
   then only every ``refresh.groups.interval.seconds``, 10 minutes), then, once the mirror is running and caught up,
   commits a first point of each partition (half of the final one), then the final one: per partition, at the end,
   half way, right before an aborted transaction (at the commit marker before it), inside an aborted transaction,
   at a seeded point, and none (0);
3. after each of the two commits the target's committed offsets of the group are asked every 0.5 s: per partition
   whose source offset moved, the seconds until the target's offset moved, and until it was the exact translation
   (any target offset from which a read_committed reader reads exactly the records the group had not consumed);
4. the contender is stopped, and a consumer of the group on the target reads from its committed offsets to the end
   (``auto.offset.reset=error``; a partition without a committed offset is reported as such): records read again
   (consumed on the source) and skipped (not consumed on the source, not read on the target), per partition.

Results: ``<out>/failover.{json,md}``. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from benchmarks import bench, load
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.profile import load_profile
from tests.support import provenance
from tests.support.cluster import produce_transactions
from tests.support.sink_jar import sink_conf

PARTITIONS = 6
CONTENDERS = ("secure_mirror", "secure_mirror_exactly_once", "mirrormaker2")
KINDS = ("end", "half", "before_abort", "in_abort", "seeded", "none")  # the final point of each partition
MM2_INTERVALS = {"emit.checkpoints.interval.seconds": 60, "sync.group.offsets.interval.seconds": 60}
POLL_SECONDS = 0.5
CAUGHT_UP_TIMEOUT = 420.0


def log(text: str) -> None:
    bench.log(f"failover: {text}")


# ---- the scenario (pure) ------------------------------------------------------------------------------------------
def layout(rng: random.Random) -> list[tuple[str, int]]:
    """Transactions in order, (end, size): committed and aborted ones alternating, plain records once, seeded sizes."""
    ends = ["commit", "abort", "commit", "abort", "none", "commit", "abort", "commit"]
    return [(end, rng.randint(5, 15)) for end in ends]


def transactions(pieces: list[tuple[str, int]], tag: str) -> list[dict]:
    """What :func:`produce_transactions` writes: each piece's records in every partition, values ``tag|p|piece|i``."""
    return [
        {
            "records": [
                {"key": f"{p}".encode(), "value": f"{tag}|{p}|{n}|{i}".encode(), "partition": p}
                for i in range(size)
                for p in range(PARTITIONS)
            ],
            "end": end,
        }
        for n, (end, size) in enumerate(pieces)
    ]


def piece_offsets(pieces: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    """(end, first offset, offset after its records) of each piece in a partition; a transaction's marker follows."""
    out, at = [], 0
    for end, size in pieces:
        out.append((end, at, at + size))
        at += size + (end != "none")
    return out


def final_points(pieces: list[tuple[str, int]], rng: random.Random) -> dict[int, tuple[str, int]]:
    """Per partition, the kind of its final committed point (shuffled, seeded) and the offset."""
    spans = piece_offsets(pieces)
    end = spans[-1][2] + (spans[-1][0] != "none")
    aborted = [(first, after) for kind, first, after in spans if kind == "abort"]
    visible = [o for kind, first, after in spans if kind != "abort" for o in range(first, after)]
    at = {
        "end": end,
        "half": visible[len(visible) // 2],
        "before_abort": aborted[-1][0] - 1,  # the commit marker of the transaction before the last aborted one
        "in_abort": (aborted[0][0] + aborted[0][1]) // 2,
        "seeded": rng.randint(1, end - 1),
        "none": 0,
    }
    kinds = rng.sample(KINDS, len(KINDS))
    return {p: (kind, at[kind]) for p, kind in enumerate(kinds[:PARTITIONS])}


def exact_range(records: list[tuple[int, int]], position: int, target_end: int) -> tuple[int, int]:
    """The target offsets from which a read_committed reader of one partition reads exactly the records not consumed
    at source ``position``: ``records`` are (source offset, target offset) of every copy on the target. Empty
    (lower > upper) when copies of consumed and unconsumed records interleave (at_least_once rewrites)."""
    consumed = [t for s, t in records if s < position]
    unconsumed = [t for s, t in records if s >= position]
    return (max(consumed) + 1 if consumed else 0), (min(unconsumed) if unconsumed else target_end)


def counts(source: list[tuple[int, int, bytes]], read: list[tuple[int, int, bytes]], position: int) -> dict:
    """One partition: records read again (consumed on the source) and skipped (neither consumed nor read)."""
    consumed = {v for _, o, v in source if o < position}
    unread = {v for _, o, v in source if o >= position}
    values = [v for _, _, v in read]
    return {
        "re_read": sum(1 for v in values if v in consumed),
        "skipped": len(unread - set(values)),
        "unconsumed": len(unread),
        "read": len(values),
    }


def spread(values: list[float]) -> dict | None:
    return (
        {"min": min(values), "median": statistics.median(values), "max": max(values), "partitions": len(values)}
        if values
        else None
    )


# ---- talking to the clusters ---------------------------------------------------------------------------------------
def commit(conf: dict, group: str, topic: str, offsets: dict[int, int]) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": group, "enable.auto.commit": False, "logger": LOG})
    consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    consumer.close()


def read(conf: dict, topic: str, starts: dict[int, int], group: str, timeout: float = 120.0):
    """(partition, offset, value) of every record read_committed from ``starts`` to the end, and the end offsets."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    settings = {"group.id": group, "enable.partition.eof": True, "isolation.level": "read_committed"}
    consumer = Consumer({**conf, **settings, "enable.auto.commit": False, "auto.offset.reset": "error", "logger": LOG})
    out: list[tuple[int, int, bytes]] = []
    ended: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in starts}
        todo = {p for p, start in starts.items() if start < ends[p]}
        consumer.assign([TopicPartition(topic, p, starts[p]) for p in todo])
        while ended < todo:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: partitions {sorted(todo - ended)} not read to the end in {timeout:.0f} s")
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(msg.error())
                ended.add(msg.partition())
                continue
            out.append((msg.partition(), msg.offset(), msg.value()))
        return out, ends
    finally:
        consumer.close()


def committed_on(conf: dict, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets of ``topic`` (partitions without one left out), asked with the admin client."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    admin = load._admin(conf)
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    try:
        held = future.result(timeout=30)
    except Exception:  # noqa: BLE001 - no such group on the target yet
        return {}
    return {tp.partition: tp.offset for tp in held.topic_partitions or [] if tp.topic == topic and tp.offset >= 0}


# ---- one contender -------------------------------------------------------------------------------------------------
class Contender:
    def __init__(self, b: bench.Bench, name: str, run_id: str, scenario: tuple[list, dict], spark_conf: dict):
        self.b, self.name, self.spark_conf = b, name, spark_conf
        self.pieces, self.points = scenario
        short = {"secure_mirror": "alo", "secure_mirror_exactly_once": "eos", "mirrormaker2": "mm2"}[name]
        self.topic = self.group = f"fo{run_id}{short}"
        self.alias = f"fo{run_id}{short}a"
        self.conf = {side: b.sb.client_conf(side, "admin") for side in ("source", "target")}

    def profile(self) -> Path:
        self.b.topic = self.topic

        def edit(data: dict) -> None:
            data["source"]["alias"] = self.alias
            if self.name == "mirrormaker2":
                data["mirror"]["mm2"]["properties"].update(
                    {"emit.checkpoints.enabled": True, "sync.group.offsets.enabled": True, "groups": self.group}
                )
            else:
                data["mirror"]["groups"] = {"include": self.group}  # sync_interval_seconds: the default
                data["mirror"]["spark"].setdefault("conf", {}).update(self.spark_conf)
                if self.name == "secure_mirror_exactly_once":
                    bench.exactly_once(data)

        path = self.b.profile(self.name, edit=edit)
        self.model = load_profile(path)
        self.target_topic = self.model.target_topic(self.topic)
        return path

    def set_up(self) -> tuple[Path, Path]:
        path = self.profile()
        rendered = self.b.render(path)
        self.b.grant(rendered)
        admin_ops.create_topics(self.conf["source"], {self.topic: PARTITIONS})
        produce_transactions(self.conf["source"], self.topic, transactions(self.pieces, self.topic), f"{self.topic}-tx")
        commit(self.conf["source"], self.group, self.topic, dict.fromkeys(range(PARTITIONS), 0))
        self.source, _ = read(self.conf["source"], self.topic, dict.fromkeys(range(PARTITIONS), 0), "fo-reader")
        return path, rendered

    def argv(self, path: Path, rendered: Path) -> list[str]:
        if self.name == "mirrormaker2":
            return bench.mirrormaker2_argv(rendered)
        return self.b.job_argv(path, self.b.work / f"run-{self.name}", "--trigger-interval", "1 second")

    def run(self) -> dict:
        path, rendered = self.set_up()
        log_file = self.b.work / f"{self.name}.log"
        out: dict = {"topic": self.topic, "target_topic": self.target_topic, "group": self.group, "log": log_file.name}
        out["intervals"] = (
            {**MM2_INTERVALS, "refresh.groups.interval.seconds": 600}
            if self.name == "mirrormaker2"
            else {"mirror.groups.sync_interval_seconds": self.model.mirror.groups.sync_interval_seconds}
        )
        with open(log_file, "w") as fh:
            started = time.monotonic()
            proc = subprocess.Popen(
                self.argv(path, rendered), stdout=fh, stderr=subprocess.STDOUT, cwd=bench.REPO, start_new_session=True
            )
        try:
            copies = self.caught_up(proc, started)
            out["caught_up_seconds"] = time.monotonic() - started
            final = {p: at for p, (_, at) in self.points.items()}
            first = {p: at // 2 for p, at in final.items()}
            out["first_commit"] = self.sync_latency(first, copies, proc)
            out["final_commit"] = self.sync_latency(final, copies, proc)
        finally:
            bench.stop(proc)
        out["failover"] = self.read_as_group(final)
        return out

    def caught_up(self, proc: subprocess.Popen, started: float) -> dict[int, list[tuple[int, int]]]:
        """Once the target holds a copy of every visible source record: per partition, (source, target) offsets."""
        by_value = {v: (p, o) for p, o, v in self.source}
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {proc.returncode} before it caught up")
            if time.monotonic() - started > CAUGHT_UP_TIMEOUT:
                raise RuntimeError(f"{self.name} not caught up in {CAUGHT_UP_TIMEOUT:.0f} s")
            try:
                records, self.target_ends = read(
                    self.conf["target"], self.target_topic, dict.fromkeys(range(PARTITIONS), 0), "fo-reader"
                )
            except Exception:  # noqa: BLE001 - the target topic is not there yet
                records = []
            if {v for _, _, v in records} >= set(by_value):
                copies: dict[int, list[tuple[int, int]]] = {p: [] for p in range(PARTITIONS)}
                for p, o, v in records:
                    copies[p].append((by_value[v][1], o))
                log(f"{self.name}: caught up after {time.monotonic() - started:.1f} s")
                return copies
            time.sleep(2.0)

    def sync_latency(self, offsets: dict[int, int], copies: dict, proc: subprocess.Popen) -> dict:
        """Commit ``offsets`` on the source, then ask the target every 0.5 s: per partition whose source offset moved,
        the seconds until the target's offset took the value it ends the window with (its translation of this
        commit), and until it was the exact translation for good. The window ends when every such partition is exact
        or after the time limit; MirrorMaker 2's is always whole (two of its intervals and 30 s), since its
        translation is not exact and an earlier commit's sync may still arrive inside it."""
        target = self.conf["target"]
        before = committed_on(target, self.group, self.target_topic)
        previous = committed_on(self.conf["source"], self.group, self.topic)
        ranges = {p: exact_range(copies[p], offsets[p], self.target_ends[p]) for p in offsets}
        changed = [p for p in offsets if previous.get(p) != offsets[p]]
        # a partition whose target offset is already the exact translation of the new commit has nothing to move
        # (a group moved within an aborted transaction); it is listed apart, not timed
        unchanged = [p for p in changed if p in before and ranges[p][0] <= before[p] <= ranges[p][1]]
        moving = [p for p in changed if p not in unchanged]
        mm2 = self.name == "mirrormaker2"
        limit = 2 * MM2_INTERVALS["sync.group.offsets.interval.seconds"] + 30 if mm2 else 90.0
        commit(self.conf["source"], self.group, self.topic, offsets)
        t0 = time.monotonic()
        history: dict[int, list[tuple[float, int]]] = {p: [] for p in offsets}
        held = dict(before)
        while time.monotonic() - t0 < limit and proc.poll() is None:
            now = committed_on(target, self.group, self.target_topic)
            at = time.monotonic() - t0
            for p, value in now.items():
                if p in history and value != held.get(p):
                    history[p].append((at, value))
            held.update(now)
            if not mm2 and all(p in held and ranges[p][0] <= held[p] <= ranges[p][1] for p in moving):
                break
            time.sleep(POLL_SECONDS)
        settled = {p: history[p][-1][0] for p in moving if history[p]}
        exact = {p: settled[p] for p in settled if ranges[p][0] <= held[p] <= ranges[p][1]}
        log(f"{self.name}: after {time.monotonic() - t0:.1f} s translated {settled}, exact {exact}")
        return {
            "source_offsets": offsets,
            "target_before": before,
            "target_after": held,
            "changes": history,
            "exact_ranges": ranges,
            "moving_partitions": moving,
            "already_exact": unchanged,
            "seconds_to_translated": settled,
            "seconds_to_exact": exact,
            "translated": spread(list(settled.values())),
            "exact": spread(list(exact.values())),
            "never_translated": [p for p in moving if p not in settled],
            "not_exact": [p for p in moving if p not in exact],
            "window_seconds": time.monotonic() - t0,
            "time_limit_seconds": limit,
        }

    def read_as_group(self, final: dict[int, int]) -> dict:
        """A consumer of the group on the target from its committed offsets, to the end: re-read and skipped."""
        held = committed_on(self.conf["target"], self.group, self.target_topic)
        records, _ = read(self.conf["target"], self.target_topic, held, self.group)
        per_partition = {}
        for p in range(PARTITIONS):
            kind, at = self.points[p]
            row = {"kind": kind, "source_offset": at, "target_offset": held.get(p)}
            if p in held:
                source = [r for r in self.source if r[0] == p]
                row.update(counts(source, [r for r in records if r[0] == p], at))
            per_partition[p] = row
        rows = [r for r in per_partition.values() if "re_read" in r]
        return {
            "partitions": per_partition,
            "re_read": sum(r["re_read"] for r in rows),
            "skipped": sum(r["skipped"] for r in rows),
            "unconsumed": sum(r["unconsumed"] for r in rows),
            "without_target_offset": [p for p, r in per_partition.items() if "re_read" not in r],
        }

    def tear_down(self) -> None:
        for conf in self.conf.values():
            mine = [t for t in admin_ops.list_topics(conf) if self.topic in t]
            bench.delete_and_wait(conf, mine)


# ---- the run ------------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace, command: str) -> dict:
    rng = random.Random(args.seed)
    pieces = layout(rng)
    points = final_points(pieces, rng)
    order = rng.sample(CONTENDERS, len(CONTENDERS))
    result: dict = {
        "command": command,
        "seed": args.seed,
        "machine": provenance.machine(),
        "load_average_1min": {"start": os.getloadavg()[0]},
        "scenario": {"partitions": PARTITIONS, "layout": pieces, "final_points": points, "order": order},
        "contenders": {},
    }
    run_id = uuid.uuid4().hex[:6]
    with bench.sandbox_session(args.sandbox, "secure-mirror-failover-") as session:
        b = bench.Bench(session.sb, session.work, 0, PARTITIONS, args.seed)
        spark_conf = sink_conf(session.work)  # this checkout's sink, compiled when setup's jar is older
        session.each(
            "failover",
            order,
            lambda name: Contender(b, name, run_id, (pieces, points), spark_conf),
            result["contenders"],
            lambda c: c.get("failover", c),
        )
    result["load_average_1min"]["end"] = os.getloadavg()[0]
    return result


def seconds(figure: dict | None) -> str:
    return "-" if figure is None else f"{figure['min']:.1f} / {figure['median']:.1f} / {figure['max']:.1f}"


def not_moved(commit: dict) -> str:
    """The partitions whose target offset did not move within the window (``p<n>``, with the window's length)."""
    never = commit["never_translated"]
    return f"{', '.join(f'p{p}' for p in never)} ({commit['window_seconds']:.0f} s)" if never else "-"


def markdown(result: dict) -> str:
    s = result["scenario"]
    load = result["load_average_1min"]
    lines = [
        "# Failover: re-reads and group sync latency, secure_mirror against MirrorMaker 2 (issue 28)",
        "",
        f"Command: `{result['command']}` (seed {result['seed']}), on {result['machine']['cpus']} CPUs, load average "
        f"(1 min) {load['start']:.2f} at the start, {load.get('end', 0):.2f} at the end; contenders in the order "
        f"{', '.join(s['order'])}.",
        "",
        f"{s['partitions']} partitions, each written alike: "
        + ", ".join(f"{end} {size}" for end, size in s["layout"])
        + "; the group's final points: "
        + ", ".join(f"p{p} {kind} ({at})" for p, (kind, at) in s["final_points"].items())
        + ". Sync latency: seconds from the group's commit on the source to its offset on the target taking the value "
        "it ends the window with (translated), and to it being the exact translation for good (exact: "
        "from there a read_committed reader reads exactly what the group had not consumed), min / median / max over "
        "the partitions whose source offset moved and whose exact translation changed (a group moved within an "
        "aborted transaction keeps its target offset: not timed). The first commit is half of the final one.",
        "",
        "| contender | intervals | re-read | skipped | of unconsumed | partitions without target offset | first "
        "commit: translated, s | first: exact, s | first: not moved in the window | final commit: translated, s | "
        "final: exact, s | final: not moved in the window |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, c in result["contenders"].items():
        if "error" in c:
            lines.append(f"| {name} | - | error: {c['error'][:200]} | | | | | | | | | |")
            continue
        f, a, z = c["failover"], c["first_commit"], c["final_commit"]
        intervals = ", ".join(f"{k} {v}" for k, v in c["intervals"].items())
        lines.append(
            f"| {name} | {intervals} | {f['re_read']} | {f['skipped']} | {f['unconsumed']} | "
            f"{f['without_target_offset'] or '-'} | {seconds(a['translated'])} | {seconds(a['exact'])} | "
            f"{not_moved(a)} | {seconds(z['translated'])} | {seconds(z['exact'])} | {not_moved(z)} |"
        )
    lines += ["", "Per partition (kind, source offset, target offset, re-read, skipped):", ""]
    for name, c in result["contenders"].items():
        if "error" in c:
            continue
        rows = c["failover"]["partitions"].values()
        cells = [
            f"{r['kind']} {r['source_offset']} -> {r['target_offset']}: {r.get('re_read', '-')}/{r.get('skipped', '-')}"
            for r in rows
        ]
        lines.append(f"- {name}: " + "; ".join(cells))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    return bench.results_main(argv, __doc__.splitlines()[0], "--failover", "failover", run, markdown)


if __name__ == "__main__":
    sys.exit(main())
