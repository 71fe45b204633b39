"""restore (the way back's last change, instead of promote): both clusters' bindings as they were before the forward
cut-over (``plans.restore_plan``, from the forward's notes and the way back's); then the forward record is kept under
another name (``DIR/cutover-<time>.json``), so that the forward run folder can be cut over again."""

from __future__ import annotations

import os
from pathlib import Path

from secure_mirror.cutover import plans
from secure_mirror.cutover.context import Context, Preview, Reading, Step, StepFailed
from secure_mirror.cutover.notes import FenceNote, Notes
from secure_mirror.cutover.way_back import OTHER, Forward
from secure_mirror.kafka import admin_ops
from secure_mirror.profile.cluster import SIDES  # as the forward cut-over names them; the way back, the other way


def _forward(ctx: Context) -> Forward:
    if ctx.forward is None:
        raise StepFailed("restore belongs to the way back; run `secure-mirror failback`")
    return ctx.forward


def run(ctx: Context) -> dict:
    forward = _forward(ctx)
    plan = plans.restore_plan(forward.record.notes, ctx.record.notes)
    for side in SIDES:
        cluster = OTHER[side]
        ctx.note_acls(cluster, [("added", a) for a in plan.add[side]] + [("removed", a) for a in plan.delete[side]])
        ctx.ask(cluster, admin_ops.create_acls, plan.add[side], ctx.timeout)
        ctx.ask(cluster, admin_ops.delete_acls, plan.delete[side], ctx.timeout)
    kept = ctx.record.notes.forward_record or str(
        forward.run_dir / f"cutover-{ctx.record.step('restore').started or 'restored'}.json".replace(":", "")
    )
    ctx.record.notes.forward_record = kept
    ctx.save()
    if forward.path.exists() and forward.path != Path(kept):
        os.replace(forward.path, kept)
    ctx.say(f"restore: the forward cut-over's record is kept as {kept}; start the forward mirror again")
    return {
        "added": {OTHER[side]: len(plan.add[side]) for side in plan.add},
        "removed": {OTHER[side]: len(plan.delete[side]) for side in plan.delete},
        "forward_record": kept,
    }


def preview(ctx: Context, reading: Reading) -> Preview:
    """What the restore would add and delete on each cluster, were the way back's fence the one it would plan now."""
    fence = reading.fence_plan()
    plan = plans.restore_plan(
        _forward(ctx).record.notes, Notes(fence=FenceNote(tuple(fence.remove), tuple(fence.deny)))
    )
    lines = []
    for side in SIDES:
        alias = ctx.profile.cluster(OTHER[side]).alias
        lines += [f"would add on {alias} {binding.words()}" for binding in plan.add[side]]
        lines += [f"would remove on {alias} {binding.words()}" for binding in plan.delete[side]]
    return Preview(lines)


STEP = Step("restore", run, preview)
