"""The cut-over's steps, one module each, and the one ordered table of each direction: the steps the driver runs, the
record holds and the dry run previews, in this order. The way back (``failback``) runs the same steps with the way
back's profile, and instead of promoting restores both clusters' bindings to what they were before the cut-over.
Each step can run again after a crash at any point: what it is about to change it notes in the record first."""

from __future__ import annotations

from secure_mirror.cutover import report
from secure_mirror.cutover.context import Step
from secure_mirror.cutover.record import CUTOVER, FAILBACK
from secure_mirror.cutover.steps import check, drain, fence, promote, restore, stop, sync

# report: both documents beside the record (the driver writes them again whenever the command ends)
REPORT = Step("report", lambda ctx: report.write(ctx.record, ctx.run_dir))

TABLES: dict[str, tuple[Step, ...]] = {
    CUTOVER: (check.STEP, fence.STEP, drain.STEP, sync.STEP, stop.STEP, promote.STEP, REPORT),
    FAILBACK: (check.STEP, fence.STEP, drain.STEP, sync.STEP, stop.STEP, restore.STEP, REPORT),
}


def of(direction: str) -> tuple[Step, ...]:
    """The steps of ``direction``, in order (KeyError for a direction there is none of)."""
    return TABLES[direction]


def names(direction: str) -> tuple[str, ...]:
    return tuple(step.name for step in of(direction))
