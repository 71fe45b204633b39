"""One failover contender on the sandbox (:class:`Contender`): its own source topic, group and source alias, the
mirror started and caught up, two commits of the group on the source timed to the target, and the group read on the
target after the mirror stopped."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from benchmarks.failover.scenario import MM2_INTERVALS, PARTITIONS, counts, exact_range, spread, transactions
from benchmarks.harness import admin, cli, load, reading
from benchmarks.harness.bench import Bench, exactly_once
from benchmarks.harness.launch import REPO, mirrormaker2_argv, stop
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile

POLL_SECONDS = 0.5
CAUGHT_UP_TIMEOUT = 420.0

log = cli.prefixed("failover")


class Contender:
    def __init__(self, b: Bench, name: str, run_id: str, scenario: tuple[list, dict], spark_conf: dict):
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
                    exactly_once(data)

        path = self.b.profile(self.name, edit=edit)
        self.model = load_profile(path)
        self.target_topic = self.model.target_topic(self.topic)
        return path

    def set_up(self) -> tuple[Path, Path]:
        path = self.profile()
        rendered = self.b.render(path)
        self.b.grant(rendered)
        admin_ops.create_topics(self.conf["source"], {self.topic: PARTITIONS})
        written = transactions(self.pieces, self.topic)
        load.produce_transactions(self.conf["source"], self.topic, written, f"{self.topic}-tx")
        start = dict.fromkeys(range(PARTITIONS), 0)
        admin.commit(self.conf["source"], self.group, self.topic, start)
        self.source, _ = reading.records_from(self.conf["source"], self.topic, start, "fo-reader")
        return path, rendered

    def argv(self, path: Path, rendered: Path) -> list[str]:
        if self.name == "mirrormaker2":
            return mirrormaker2_argv(rendered)
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
                self.argv(path, rendered), stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True
            )
        try:
            copies = self.caught_up(proc, started)
            out["caught_up_seconds"] = time.monotonic() - started
            final = {p: at for p, (_, at) in self.points.items()}
            first = {p: at // 2 for p, at in final.items()}
            out["first_commit"] = self.sync_latency(first, copies, proc)
            out["final_commit"] = self.sync_latency(final, copies, proc)
        finally:
            stop(proc)
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
                records, self.target_ends = reading.records_from(
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
        before = admin.committed_on(target, self.group, self.target_topic)
        previous = admin.committed_on(self.conf["source"], self.group, self.topic)
        ranges = {p: exact_range(copies[p], offsets[p], self.target_ends[p]) for p in offsets}
        changed = [p for p in offsets if previous.get(p) != offsets[p]]
        # a partition whose target offset is already the exact translation of the new commit has nothing to move
        # (a group moved within an aborted transaction); it is listed apart, not timed
        unchanged = [p for p in changed if p in before and ranges[p][0] <= before[p] <= ranges[p][1]]
        moving = [p for p in changed if p not in unchanged]
        mm2 = self.name == "mirrormaker2"
        limit = 2 * MM2_INTERVALS["sync.group.offsets.interval.seconds"] + 30 if mm2 else 90.0
        admin.commit(self.conf["source"], self.group, self.topic, offsets)
        t0 = time.monotonic()
        history: dict[int, list[tuple[float, int]]] = {p: [] for p in offsets}
        held = dict(before)
        while time.monotonic() - t0 < limit and proc.poll() is None:
            now = admin.committed_on(target, self.group, self.target_topic)
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
        held = admin.committed_on(self.conf["target"], self.group, self.target_topic)
        records, _ = reading.records_from(self.conf["target"], self.target_topic, held, self.group)
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
            admin.delete_and_wait(conf, mine)
