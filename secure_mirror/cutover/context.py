"""What each step of the cut-over is given, and what it gives (issue 41, docs/cutover.md).

A :class:`Step` has a name, what it does (``run``: asks the clusters, lets a pure function of ``judge`` or ``plans``
decide, acts, and returns what it found) and a preview of what it would change (``preview``: the lines the dry run
prints, changing nothing). Both take the :class:`Context`: the profile, the admins, the groups, the run folder, the
record and how to save it, and the one set of identities the whole command acts through (one folder, one set of
processes a side), handed down to pre-flight, lag, the heartbeat, the groups' session and verify. A :class:`Reading`
reads what the clusters hold once: each step that acts reads anew, the dry run's previews share one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror.cutover import plans
from secure_mirror.cutover.notes import AclChange
from secure_mirror.cutover.record import Record
from secure_mirror.cutover.way_back import Forward
from secure_mirror.errors import SecureMirrorError
from secure_mirror.identities import Identities
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.probes.kafka_admin import acls as acl_probes
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile

ADMIN = "admin"


class StepFailed(SecureMirrorError):
    """A step that cannot go on: the sentence says what to fix; ``result`` what it found."""

    def __init__(self, message: str, result: dict | None = None):
        super().__init__(message)
        self.result = result or {}


@dataclass
class Context:
    profile: Profile
    admins: dict[Side, Cluster]
    groups: list[str]
    run_dir: Path
    record: Record
    save: Callable[[], None]
    identities: Identities
    force: bool = False
    timeout: float = 120.0
    say: Callable[[str], None] = print
    forward: Forward | None = None  # set for the way back

    @property
    def direction(self) -> str:
        return self.record.command.direction

    def ask(self, side: Side, fn: Callable, *args, who: str = ADMIN, **kwargs):
        return self.identities.call(side, fn, *args, who=who, **kwargs)

    def note_acls(self, cluster: Side, changes: list[tuple[str, Acl]]) -> None:
        """Add ``changes`` (added or removed, a binding) on ``cluster`` to the record's ACL changes, each once, with
        the admin who makes them; written at once."""
        by = self.admins[cluster].kafka_principal if cluster in self.admins else "the admin identity"
        noted = self.record.notes.acls
        for change, acl in changes:
            entry = AclChange(cluster, change, by, acl)
            if entry not in noted:
                noted.append(entry)
        self.save()


@dataclass(frozen=True)
class Preview:
    """What a step would do, as lines the dry run prints after the step's name; ``refused``: the step would stop on
    what the clusters hold (the fence, a producer it cannot stop), and the dry run exits 1."""

    lines: list[str] = field(default_factory=list)
    refused: bool = False


Inventory = tuple[list[Acl], dict[str, int]]  # a cluster's ACL bindings, and its topics with their partition counts


class Reading:
    """What the clusters hold, each side read once as its admin identity, and the fence's plan from it."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._inventories: dict[Side, Inventory] = {}

    def inventory(self, side: Side) -> Inventory:
        if side not in self._inventories:
            ctx = self.ctx
            answer = ctx.ask(side, acl_probes.read_acls, ctx.timeout)
            if "error" in answer:  # named by alias: the way back's source is the forward's target
                alias = ctx.profile.cluster(side).alias
                raise StepFailed(f"{alias}'s ACLs could not be read as the admin identity: {answer['error']}")
            self._inventories[side] = (list(answer["acls"]), dict(answer["topics"]))
        return self._inventories[side]

    def selected(self) -> list[str]:
        """The source's topics the profile selects."""
        return self.ctx.profile.selection().select(list(self.inventory("source")[1]))

    def fence_plan(self) -> plans.FencePlan:
        return plans.fence_plan(self.ctx.profile, self.inventory("source")[0], self.selected())


def nothing_to_preview(_ctx: Context, _reading: Reading) -> Preview:
    return Preview()


@dataclass(frozen=True)
class Step:
    """A step of the cut-over: ``run`` does it and returns what it found (raising :class:`StepFailed` with the fix
    when it cannot go on); ``preview`` says what it would change, changing nothing."""

    name: str
    run: Callable[[Context], dict]
    preview: Callable[[Context, Reading], Preview] = nothing_to_preview
