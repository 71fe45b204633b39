"""Group offset sync while ``run`` runs: a thread of the launcher process (so the same wherever Spark's driver is,
YARN included) that every ``mirror.groups.sync_interval_seconds`` translates the selected source groups' committed
offsets, writes what changed as MirrorMaker 2 checkpoints, and commits on the target for groups with no active
members there, never backwards. Problems are said once each (a missing grant does not stop the mirror); a group
ahead of the mirror is said once and translated on a later pass."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO

from secure_mirror.errors import SecureMirrorError
from secure_mirror.profile.models import Profile
from secure_mirror.run.groups import decide
from secure_mirror.run.groups.session import Observation, Session
from secure_mirror.run.groups.translate import AHEAD, TRANSLATED, WORDS

PREFIX = "secure-mirror run: group sync:"


def pass_messages(observation: Observation, plan: decide.Plan, failed: dict[str, str]) -> list[str]:
    """What one pass has to say (each is printed once per run): groups a cluster did not answer for, groups skipped
    for their active members, partitions not (yet) translated, writes that failed, and groups committed."""
    out = [
        f"{PREFIX} the {side} did not answer for group {g.group}: {g.error}"
        for side, groups in (("source", observation.sources), ("target", observation.targets))
        for g in groups.values()
        if g.error
    ]
    out += [f"{PREFIX} group {group} not committed on the target: {why}" for group, why in plan.skipped.items()]
    for row in plan.rows:
        where = f"group {row.group} {row.topic}-{row.partition}"
        if row.state == AHEAD:
            out.append(
                f"{PREFIX} {where} is ahead of the mirror; it is translated once mirrored"
            )  # once, not per batch
        elif row.state != TRANSLATED:
            out.append(f"{PREFIX} {where} is {WORDS[row.state]}: {row.reason}")
    out += [f"{PREFIX} writing to {name} on the target failed: {why}" for name, why in sorted(failed.items())]
    out += [f"{PREFIX} group {group} follows the mirror on the target" for group in plan.commits if group not in failed]
    return out


class GroupSync:
    """One pass at a time over a :class:`Session`, remembering the checkpoints written and the messages said."""

    def __init__(self, session: Session, say: Callable[[str], None]):
        self.session, self.say = session, say
        self.written: dict[decide.CheckpointKey, tuple[int, int]] = {}
        self.said: set[str] = set()

    def once(self) -> decide.Plan:
        observation = self.session.observe()
        plan = observation.plan()
        fresh = decide.fresh_checkpoints(self.written, plan.checkpoints)
        failed = self.session.write(fresh, plan)
        if self.session.checkpoints_topic not in failed:
            decide.remember(self.written, fresh)
        for message in pass_messages(observation, plan, failed):
            self.tell(message)
        return plan

    def tell(self, message: str) -> None:
        if message not in self.said:
            self.said.add(message)
            self.say(message)


class SyncThread:
    """``start(profile)`` (None when groups are off) ... ``stop()``: a last pass, then the workers end."""

    def __init__(self, profile: Profile, out: TextIO):
        self.profile, self.out = profile, out
        self.interval = profile.mirror.groups.sync_interval_seconds
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="secure-mirror-group-sync", daemon=True)

    def _say(self, message: str) -> None:
        print(message, file=self.out, flush=True)

    def _run(self) -> None:
        said: set[str] = set()
        try:
            with Session(self.profile) as session:
                sync = GroupSync(session, self._say)
                sync.said = said
                while not self.stopping.wait(self.interval):
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


def start(profile: Profile, out: TextIO = sys.stderr) -> SyncThread | None:
    """The group sync of ``profile``'s run, started (None when ``mirror.groups`` selects no group)."""
    if not profile.mirror.groups.enabled:
        return None
    sync = SyncThread(profile, out)
    sync.thread.start()
    return sync
