"""One contender over the estate (:class:`Contender`): the estate's group offsets put back on the source and its
groups deleted on the target; a source alias of its own (fresh target topics); the mirror started and caught up;
the seconds until every group's offsets are on the target; a window with the active groups committing, its brokers'
CPU against the same window before the contender started, and how soon a commit is in place on the target; then
the contender stopped and every group's target offsets judged against its source offsets."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import time
from pathlib import Path

from benchmarks.groups.activity import Committer, Members
from benchmarks.groups.estate import PARTITIONS, RECORDS, TOPICS, Estate, exact, topic_name
from benchmarks.harness import admin, cli, reading, requests
from benchmarks.harness.bench import Bench
from benchmarks.harness.cpu import CLOCK_TICKS, proc_stat
from benchmarks.harness.launch import REPO, mirrormaker2_argv, stop
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all

log = cli.prefixed("groups")
SHORT = {"secure_mirror": "alo", "mirrormaker2": "mm2"}
CAUGHT_UP_TIMEOUT = 600.0
WATCHED = 20  # active groups whose commits are timed to the target


def broker_requests(b: Bench) -> dict[str, dict[str, int]]:
    """Each side's broker's requests served so far, by API (benchmarks/harness/requests.py)."""
    return {side: requests.counts(int(b.sb.state["pids"][side])) for side in ("source", "target")}


def broker_cpu_seconds(b: Bench) -> dict[str, float]:
    """Each side's broker process's user + system CPU seconds so far."""
    out = {}
    for side in ("source", "target"):
        fields = proc_stat(str(b.sb.state["pids"].get(side)))
        out[side] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS if fields else float("nan")
    return out


class Contender:
    def __init__(self, b: Bench, name: str, run_id: str, estate: Estate, args):
        self.b, self.name, self.estate, self.args = b, name, estate, args
        self.alias = f"g{run_id}{SHORT[name]}"
        self.conf = {side: b.sb.client_conf(side, "admin") for side in ("source", "target")}
        self.interval = args.sync_interval

    # ---- set-up --------------------------------------------------------------------------------------------------
    def profile(self) -> Path:
        def edit(data: dict) -> None:
            data["source"]["alias"] = self.alias
            data["mirror"]["topics"] = {"include": r"estate\..*"}
            data["mirror"]["groups"] = {"include": "estate-.*", "sync_interval_seconds": self.interval}

        self.b.topic = "estate"
        path = self.b.profile(self.name, edit=edit)
        self.model = load_profile(path)
        return path

    def reset_groups(self) -> None:
        """Every estate group back at its start offsets on the source (member groups deleted: their consumers commit
        anew), and none of them on the target."""
        starts = {g.name: {g.topic: g.start} for g in self.estate.groups if g.start}
        errors = admin.commit_many(self.conf["source"], starts)
        if errors:
            raise RuntimeError(f"{len(errors)} groups not reset on the source, e.g. {next(iter(errors.items()))}")
        admin.delete_groups(self.conf["source"], [g.name for g in self.estate.of("member")])
        admin.delete_groups(self.conf["target"], admin.prefixed_groups(self.conf["target"], "estate-"))

    def argv(self, path: Path, rendered: Path) -> list[str]:
        if self.name == "mirrormaker2":
            return mirrormaker2_argv(rendered)
        self.run_dir = self.b.work / f"run-{self.alias}"
        return self.b.job_argv(path, self.run_dir, "--trigger-interval", "1 second")

    # ---- the run -------------------------------------------------------------------------------------------------
    def prepare(self) -> tuple[Path, Path]:
        """The contender's profile, rendered into a folder of its own, and its grants given."""
        path = self.profile()
        rendered = self.b.work / f"rendered-{self.alias}"
        render_all(self.model, rendered)
        self.b.grant(rendered)
        return path, rendered

    def run(self) -> dict:
        path, rendered = self.prepare()
        self.reset_groups()
        active = self.estate.of("active")
        watched = [g.name for g in active[:WATCHED]]
        out: dict = {"alias": self.alias, "sync_interval_seconds": self.interval}
        out["baseline"] = self.window(Committer(self.conf["source"], active, watched, self.interval))
        self.reset_groups()
        members = Members(self.conf["source"], self.estate)
        members.start()
        log_file = self.b.work / f"{self.alias}.log"
        with open(log_file, "w") as fh:
            started = time.monotonic()
            proc = subprocess.Popen(
                self.argv(path, rendered), stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True
            )
        try:
            out["caught_up_seconds"] = self.caught_up(proc, started)
            out["caught_up_time"] = time.time()  # wall clock, as the passes' lines say when they ended
            out["in_place"] = self.in_place(proc, started)
            committer = Committer(self.conf["source"], active, watched, self.interval)
            out["window"] = self.window(committer, proc)
            out["window"]["commit_to_target_seconds"] = self.commit_latency(committer, proc)
            running_log = log_file.stat().st_size  # what it said before it was asked to stop
        finally:
            stop(proc)
            members.stop()
        out["after_stop"] = self.judged()
        out["log"] = self.log_figures(
            log_file, running_log if "running_log" in locals() else None, out.get("caught_up_time")
        )
        return out

    def target_topic(self, topic: str) -> str:
        return self.model.target_topic(topic)

    def caught_up(self, proc: subprocess.Popen, started: float) -> float:
        """Seconds until the target holds every record of the estate's plain topics."""
        want = TOPICS * PARTITIONS * RECORDS
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {proc.returncode} before it caught up")
            if time.monotonic() - started > CAUGHT_UP_TIMEOUT:
                raise RuntimeError(f"{self.name} not caught up in {CAUGHT_UP_TIMEOUT:.0f} s")
            have = sum(
                reading.end_offsets(self.conf["target"], self.target_topic(topic_name(i))) for i in range(TOPICS)
            )
            if have >= want:
                seconds = time.monotonic() - started
                log(f"{self.name}: caught up after {seconds:.1f} s")
                return seconds
            time.sleep(2.0)

    def target_offsets(self, names: list[str]) -> dict[str, dict[str, dict[int, int]]]:
        return admin.group_offsets(self.conf["target"], names)

    def in_place(self, proc: subprocess.Popen, started: float) -> dict:
        """Seconds from the contender's start until every group has a target offset on each partition it committed,
        and until every plain group's is exact; what is still missing at the limit."""
        limit = started + self.args.in_place_limit
        plain = [g for g in self.estate.groups if g.kind in ("idle", "active")]
        out: dict = {"limit_seconds": self.args.in_place_limit}
        present: list = []
        exactly: list = []
        first = True  # asked at least once, even when catching up took longer than the limit
        while (first or time.monotonic() < limit) and proc.poll() is None:
            first = False
            held = self.target_offsets(self.estate.names)
            present = [
                g
                for g in self.estate.groups
                if g.kind != "member" and set(held[g.name].get(self.target_topic(g.topic), {})) >= set(g.start)
            ]
            exactly = [g for g in plain if held[g.name].get(self.target_topic(g.topic), {}) == g.start]
            now = time.monotonic() - started
            if (
                len(present) == len(self.estate.groups) - len(self.estate.of("member"))
                and "all_present_seconds" not in out
            ):
                out["all_present_seconds"] = now
            if len(exactly) == len(plain):
                out["all_exact_seconds"] = now
                break
            time.sleep(5.0)  # asking for 10,000 groups' offsets is itself a load on the target
        out.update({"present": len(present), "exact": len(exactly), "plain_groups": len(plain)})
        log(f"{self.name}: in place {out}")
        return out

    def window(self, committer: Committer, proc: subprocess.Popen | None = None) -> dict:
        """The active groups committing for ``--window`` seconds: each broker's CPU seconds over it; with a contender
        running, its watched groups' target offsets polled until two passes after the last commit."""
        asked, read_from = broker_requests(self.b), time.monotonic()
        before = broker_cpu_seconds(self.b)
        t0 = time.monotonic()
        committer.start()
        self.poll_watched(committer, t0 + self.args.window, proc)
        committer.stop()
        after = broker_cpu_seconds(self.b)
        seconds = time.monotonic() - t0
        served = broker_requests(self.b)
        read_for = time.monotonic() - read_from  # the readings' own seconds: each starts Kafka's JmxTool
        if proc is not None:
            self.poll_watched(committer, time.monotonic() + 2 * self.interval + 1, proc, more=True)
        return {
            "seconds": seconds,
            "broker_cpu_seconds": {side: after[side] - before[side] for side in before},
            "broker_requests": {side: requests.difference(served[side], asked[side]) for side in asked},
            "broker_requests_seconds": read_for,
            "commits_refused": committer.errors,
        }

    def poll_watched(self, committer: Committer, until: float, proc: subprocess.Popen | None, more: bool = False):
        """Every 0.5 s until ``until``: the watched groups' target offsets, kept as (time, partition -> offset)."""
        if not more:
            self.seen: dict[str, list[tuple[float, dict[int, int]]]] = {g: [] for g in committer.watched}
        topics = {g.name: self.target_topic(g.topic) for g in self.estate.of("active")}
        while time.monotonic() < until:
            if proc is not None:
                held = self.target_offsets(sorted(committer.watched))
                at = time.monotonic()
                for g in committer.watched:
                    self.seen[g].append((at, held[g].get(topics[g], {})))
            time.sleep(0.5)

    def commit_latency(self, committer: Committer, proc: subprocess.Popen) -> dict:
        """Per watched commit, the seconds until the target held it exactly (each partition at least the committed
        offset: the records keep their offsets); commits not in place two passes after the window counted apart."""
        seconds, missed = [], 0
        for group, commits in committer.commits.items():
            for at, offsets in commits:
                when = next(
                    (
                        t
                        for t, held in self.seen[group]
                        if t >= at and all(held.get(p, -1) >= o for p, o in offsets.items())
                    ),
                    None,
                )
                if when is None:
                    missed += 1
                else:
                    seconds.append(when - at)
        return {
            "commits": len(seconds) + missed,
            "median": _median(seconds),
            "max": max(seconds) if seconds else None,
            "not_in_place_in_window": missed,
            "passes_median": statistics.median(seconds) / self.interval if seconds else None,
        }

    def judged(self) -> dict:
        """After the contender stopped: every plain group's target offsets against its source offsets (what a
        failover of each would re-read and skip)."""
        plain = [g for g in self.estate.groups if g.kind in ("idle", "active")]
        source = admin.group_offsets(self.conf["source"], [g.name for g in plain])
        target = self.target_offsets([g.name for g in plain])
        totals = {"re_read": 0, "skipped": 0, "missing": 0, "groups_re_reading": 0, "groups_skipping": 0}
        for g in plain:
            found = exact(g, source[g.name].get(g.topic, {}), target[g.name].get(self.target_topic(g.topic), {}))
            for key in ("re_read", "skipped", "missing"):
                totals[key] += found[key]
            totals["groups_re_reading"] += bool(found["re_read"])
            totals["groups_skipping"] += bool(found["skipped"])
        totals["groups"] = len(plain)
        return totals

    def log_figures(self, log_file: Path, running: int | None, caught_up: float | None = None) -> dict:
        """Error lines the contender logged while it ran (not those of its stop), and our sync's pass figures."""
        text = log_file.read_bytes()[:running].decode(errors="replace")
        errors = [line for line in text.splitlines() if re.search(r"\bERROR\b", line)]
        out: dict = {"log": log_file.name, "error_lines": len(errors), "first_errors": [e[:300] for e in errors[:5]]}
        if self.name != "mirrormaker2":
            out["passes"] = self.pass_figures(caught_up)
        return out

    def pass_figures(self, caught_up: float | None = None) -> dict:
        """The sync's passes from the run's metrics file: medians of the incremental passes and of each phase, over
        the whole run and over the passes that started after the job caught up (``caught_up``, wall clock: the estate
        as it stays, no longer sharing the CPUs with the backlog's copy), and each pass's own figures."""
        lines = [
            json.loads(line)
            for line in (self.run_dir / "metrics.jsonl").read_text().splitlines()
            if line.startswith('{"group_sync"')
        ]
        passes = [line["group_sync"] for line in lines]
        steady = [p for p in passes if caught_up is not None and p["time"] - p["seconds"] >= caught_up]
        incremental = [p["seconds"] for p in passes if not p["full"]]
        full = [p["seconds"] for p in passes if p["full"]]
        return {
            "passes": len(passes),
            "incremental_median_seconds": _median(incremental),
            "incremental_max_seconds": max(incremental) if incremental else None,
            "full_median_seconds": _median(full),
            "full_max_seconds": max(full) if full else None,
            "planned_median": _median([p["planned"] for p in passes if not p["full"]]),
            "groups": passes[-1]["groups"] if passes else None,
            "phase_medians_seconds": _phase_medians(passes),
            "steady_passes": len(steady),
            "steady_incremental_median_seconds": _median([p["seconds"] for p in steady if not p["full"]]),
            "steady_phase_medians_seconds": _phase_medians(steady),
            "each": [
                {k: p.get(k) for k in ("time", "seconds", "full", "planned", "phases", "steps") if k in p}
                for p in passes
            ],
        }

    def tear_down(self) -> None:
        for side, conf in self.conf.items():
            mine = [
                t
                for t in admin_ops.list_topics(conf)
                if t.startswith(f"{self.alias}.") or (side == "target" and self.alias in t)
            ]
            admin.delete_and_wait(conf, mine)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _phase_medians(passes: list[dict]) -> dict[str, float]:
    """Each phase's median over the incremental passes of ``passes`` that timed them (builds from 753e5ee say
    ``source``, ``target`` and ``write``; from this change ``plan`` too)."""
    timed = [p["phases"] for p in passes if not p["full"] and p.get("phases")]
    return {phase: statistics.median(t[phase] for t in timed if phase in t) for phase in timed[-1]} if timed else {}
