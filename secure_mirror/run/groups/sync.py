"""Group offset sync while ``run`` runs: a thread of the launcher process (so the same wherever Spark's driver is,
YARN included) that every ``mirror.groups.sync_interval_seconds`` translates the selected source groups' committed
offsets, writes what changed as MirrorMaker 2 checkpoints, and commits on the target for groups with no active
members there, never backwards. Problems are said once each (a missing grant does not stop the mirror); a group
ahead of the mirror is said once and translated on a later pass.

Each pass that writes checkpoints appends one line to the run's metrics file with MirrorMaker 2's
``checkpoint-latency-ms`` per group, topic and partition (as MirrorCheckpointTask measures it: from the moment the
pass asked the source for the group's offsets to the target's acknowledgement of the checkpoint), and a summary of
the groups is said whenever it changes (docs/failover.md, "While run runs")."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from secure_mirror import folders
from secure_mirror.errors import SecureMirrorError
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile
from secure_mirror.run.groups import changes, decide
from secure_mirror.run.groups.checkpoints import Checkpoint
from secure_mirror.run.groups.session import Observation, Session
from secure_mirror.run.groups.translate import AHEAD, TRANSLATED, WORDS

PREFIX = "secure-mirror run: group sync:"
METRICS_KEY = "checkpoints"  # the metrics file's line of a pass: {"checkpoints": {...}} beside the job's batch lines
PASS_KEY = "group_sync"  # and of every pass: {"group_sync": {"time", "seconds", "groups", "planned", "full", ...}}


def summary(plan: decide.Plan, failed: dict[str, str]) -> str:
    """One line on the selected groups after a pass: how many follow the mirror on the target (a partition of theirs
    at least is translated), wait for it (none is yet: ahead of the mirror), were skipped for active members, or could
    not be committed; and how many partitions cannot be translated."""
    groups = sorted({row.group for row in plan.rows})
    skipped = set(plan.skipped)
    failing = {group for group in groups if group in failed}
    translated = {row.group for row in plan.rows if row.state == TRANSLATED}
    waiting = {row.group for row in plan.rows if row.state == AHEAD} - translated - skipped - failing
    untranslated = sum(1 for row in plan.rows if row.state not in (TRANSLATED, AHEAD))
    following = len(translated - skipped - failing)
    parts = [f"{len(groups)} selected", f"{following} following the mirror on the target"]
    parts += [f"{len(waiting)} waiting for the mirror"] if waiting else []
    parts += [f"{len(skipped)} skipped (active members on the target)"] if skipped else []
    parts += [f"{len(failing)} not committed (see above)"] if failing else []
    parts += [f"{untranslated} partitions not translatable"] if untranslated else []
    return f"{PREFIX} groups: " + ", ".join(parts)


def latency_line(written: Sequence[Checkpoint], asked: float, acknowledged: float, source: str, target: str) -> dict:
    """The metrics file's line for the checkpoints one pass wrote: MirrorMaker 2's ``checkpoint-latency-ms``
    (``acknowledged - asked``, wall-clock seconds) per group, target topic and partition, with MirrorMaker 2's tags."""
    latency = max(0, round((acknowledged - asked) * 1000))
    return {
        METRICS_KEY: {
            "time": acknowledged,
            "source": source,
            "target": target,
            "figures": [
                {
                    "group": c.group,
                    "topic": c.topic,
                    "partition": c.partition,
                    "upstream-offset": c.upstream_offset,
                    "downstream-offset": c.downstream_offset,
                    "checkpoint-latency-ms": latency,
                }
                for c in written
            ],
        }
    }


def pass_line(
    asked: float,
    ended: float,
    groups: int,
    planned: int,
    full: bool,
    read_by: Mapping[Side, str] | None = None,
    phases: Mapping[str, float] | None = None,
    steps: Mapping[str, float] | None = None,
) -> dict:
    """The metrics file's line of one pass: when it ended, how long it took (wall-clock seconds), how many groups it
    asked the source about, how many it planned (asked the target about, translated, wrote), whether all were, what
    read each side's offsets (side -> ``java_offsets.JAVA_ADMIN`` or ``LIBRDKAFKA``), and the seconds of its phases
    (``source``: the groups listed and their offsets read; ``target``: the planned groups read there; ``plan``: their
    offsets translated and the checkpoints chosen; ``write``: the checkpoints written and the offsets committed), and
    of the steps of its reads (``Session.steps``: each request, the offset map, the changes found)."""
    return {
        PASS_KEY: {
            "time": ended,
            "seconds": round(ended - asked, 3),
            "groups": groups,
            "planned": planned,
            "full": full,
            "read_by": dict(read_by or {}),
            "phases": {phase: round(seconds, 3) for phase, seconds in (phases or {}).items()},
            "steps": {step: round(seconds, 3) for step, seconds in (steps or {}).items()},
        }
    }


# Each kind of message a pass says, one per group or partition, as a sentence counts them; past SAID_PER_KIND of a
# kind in a run the rest are not said one by one (10,000 groups would make as many lines): the summary counts them
# and ``secure-mirror groups --all`` lists them. A failed write is always said.
KINDS = {
    "unanswered": "groups a cluster did not answer for",
    "skipped": "groups not committed for their active members on the target",
    "ahead": "partitions ahead of the mirror",
    "untranslated": "partitions not translatable",
    "write": "failed writes",
    "follows": "groups that follow the mirror on the target",
}
SAID_PER_KIND = 20
Message = tuple[str, str]  # (kind, sentence)


def pass_messages(observation: Observation, plan: decide.Plan, failed: dict[str, str]) -> list[Message]:
    """What one pass has to say, each with its kind (:data:`KINDS`; each is printed once per run): groups a cluster
    did not answer for, groups skipped for their active members, partitions not (yet) translated, writes that
    failed, and groups committed."""
    out = [
        ("unanswered", f"{PREFIX} the {side} did not answer for group {g.group}: {g.error}")
        for side, groups in (("source", observation.sources), ("target", observation.targets))
        for g in groups.values()
        if g.error
    ]
    out += [("skipped", f"{PREFIX} group {g} not committed on the target: {why}") for g, why in plan.skipped.items()]
    for row in plan.rows:
        where = f"group {row.group} {row.topic}-{row.partition}"
        if row.state == AHEAD:  # once, not per batch
            out.append(("ahead", f"{PREFIX} {where} is ahead of the mirror; it is translated once mirrored"))
        elif row.state != TRANSLATED:
            out.append(("untranslated", f"{PREFIX} {where} is {WORDS[row.state]}: {row.reason}"))
    out += [
        ("write", f"{PREFIX} writing to {name} on the target failed: {why}") for name, why in sorted(failed.items())
    ]
    out += [
        ("follows", f"{PREFIX} group {group} follows the mirror on the target")
        for group in plan.commits
        if group not in failed
    ]
    return out


class GroupSync:
    """One pass at a time over a :class:`Session`, remembering the checkpoints written and the messages said."""

    def __init__(self, session: Session, say: Callable[[str], None], record: Callable[[dict], None] | None = None):
        self.session, self.say, self.record = session, say, record
        self.written: dict[decide.CheckpointKey, tuple[int, int]] = {}
        self.memory = changes.Memory()
        self.said: set[str] = set()
        self.counted: dict[str, int] = {}
        self.last_summary = ""

    def once(self) -> decide.Plan:
        """One pass (:mod:`.changes`: every group's source offsets asked, the rest only where something changed);
        the plan of every remembered group."""
        asked = time.time()
        observation, target_states = self.session.observe_pass(self.memory)
        planning = time.monotonic()
        plan = observation.plan()
        fresh = decide.fresh_checkpoints(self.written, plan.checkpoints)
        writing = time.monotonic()
        failed = self.session.write(fresh, plan)
        phases = {**self.session.phases, "plan": writing - planning, "write": time.monotonic() - writing}
        if self.session.checkpoints_topic not in failed:
            decide.remember(self.written, fresh)
            if fresh and self.record is not None:
                profile = self.session.profile
                self.record(latency_line(fresh, asked, time.time(), profile.source.alias, profile.target.alias))
        full = self.memory.full_pass_due
        ends = changes.map_ends(observation.maps)
        changes.remember(self.memory, observation.sources, observation.targets, target_states, plan, failed, ends)
        if self.record is not None:
            groups, planned, read_by = len(observation.sources), len(observation.targets), self.session.read_by
            self.record(pass_line(asked, time.time(), groups, planned, full, read_by, phases, self.session.steps))
        for kind, message in pass_messages(observation, plan, failed):
            self.tell(message, kind)
        if (why := self.session.java_failure) is not None:
            self.tell(
                f"{PREFIX} Kafka's Java Admin could not read the groups' offsets ({why}); each group is read "
                "through librdkafka instead, one request a group"
            )
        whole = changes.whole(self.memory)
        if (line := summary(whole, failed)) != self.last_summary:
            self.last_summary = line
            self.say(line)
        return whole

    def tell(self, message: str, kind: str | None = None) -> None:
        """Say ``message`` once per run; of a ``kind`` (:data:`KINDS`) past :data:`SAID_PER_KIND`, say instead, once,
        that the rest are not said one by one."""
        if message in self.said:
            return
        self.said.add(message)
        if kind is not None and kind != "write":
            self.counted[kind] = self.counted.get(kind, 0) + 1
            if self.counted[kind] > SAID_PER_KIND:
                if self.counted[kind] == SAID_PER_KIND + 1:
                    self.say(
                        f"{PREFIX} more {KINDS[kind]} than {SAID_PER_KIND}: the rest are not said one by one; the "
                        "summary counts them and `secure-mirror groups PROFILE --all` lists them"
                    )
                return
        self.say(message)


def next_wait(started: float, now: float, interval: float) -> float:
    """Seconds until the next pass: passes start every ``interval`` seconds (a pass that took longer is followed at
    once), so a commit waits at most one interval and one pass whatever a pass costs."""
    return max(0.0, started + interval - now)


class SyncThread:
    """``start(profile)`` (None when groups are off) ... ``stop()``: a last pass, then the workers end."""

    def __init__(self, profile: Profile, out: TextIO, metrics_file: str | None = None):
        self.profile, self.out, self.metrics_file = profile, out, metrics_file
        self.interval = profile.mirror.groups.sync_interval_seconds
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="secure-mirror-group-sync", daemon=True)

    def _say(self, message: str) -> None:
        print(message, file=self.out, flush=True)

    def _record(self, line: dict) -> None:
        """One line appended to the metrics file the job appends its batches to (``folders.append``: one write(2),
        never interleaved with the job's lines, never through a symbolic link put in its place: then it says so once
        and writes no more, as the job does)."""
        if self.metrics_file:
            try:
                folders.append(self.metrics_file, (json.dumps(line) + "\n").encode(), 0o600)
            except OSError as exc:
                self._say(f"{PREFIX} stopped writing {self.metrics_file} ({exc.strerror}); the mirror is not affected")
                self.metrics_file = None

    def _run(self) -> None:
        said: set[str] = set()
        try:
            with Session(self.profile) as session:
                sync = GroupSync(session, self._say, self._record)
                sync.said = said
                started = time.monotonic()
                while not self.stopping.wait(next_wait(started, time.monotonic(), self.interval)):
                    started = time.monotonic()
                    self._pass(sync)
                self._pass(sync)  # the last one, after the job stopped
        except Exception as exc:  # noqa: BLE001 - the sync never stops the mirror; it says why it stopped
            self._say(f"{PREFIX} stopped ({type(exc).__name__}: {exc}); the mirror is not affected")

    def _pass(self, sync: GroupSync) -> None:
        try:
            sync.once()
        except SecureMirrorError as exc:  # a refused request, a cluster out of reach: said once, tried again
            sync.tell(f"{PREFIX} {exc}; the mirror keeps running and the sync tries again")

    def stop(self, timeout: float = 120.0) -> None:
        self.stopping.set()
        self.thread.join(timeout)


def start(profile: Profile, out: TextIO = sys.stderr, metrics_file: str | None = None) -> SyncThread | None:
    """The group sync of ``profile``'s run, started (None when ``mirror.groups`` selects no group)."""
    if not profile.mirror.groups.enabled:
        return None
    sync = SyncThread(profile, out, metrics_file)
    sync.thread.start()
    return sync
