"""fence: the producers' grants on the source changed so they cannot write the selected topics (``plans.fence_plan``,
noted in the record before anything changes; a re-run applies the noted plan again), then the selected partitions
read once a second until their end offsets are still and no transaction is open. On the way back its source is the
forward's target, and its sentences name the cluster by its alias."""

from __future__ import annotations

import time

from secure_mirror.cutover import judge
from secure_mirror.cutover.context import Context, Preview, Reading, Step, StepFailed
from secure_mirror.cutover.notes import FencedEnd, FenceNote
from secure_mirror.kafka import admin_ops
from secure_mirror.profile.models import Profile
from secure_mirror.run.clients import stable_ends

QUIET_READINGS = 3  # end offsets unchanged over this many readings, a second apart, and the fence holds


def fencing_words(profile: Profile, denied: int, removed: int) -> str:
    """What the fence is about to change, on the cluster it changes named by its alias: ``profile``'s source, which
    on the way back (``failback``) is the cluster the forward cut-over calls its target."""
    return f"fence: adding {denied} DENY WRITE and removing {removed} ALLOW WRITE binding(s) on {profile.source.alias}"


def run(ctx: Context) -> dict:
    reading = Reading(ctx)
    plan = reading.fence_plan()
    recorded = ctx.record.notes.fence
    if recorded is None and plan.unfenceable:
        named = [
            f"{u.binding.principal} through {u.binding.operation} on {u.binding.resource_type} "
            f"{u.binding.pattern_type} {u.binding.resource_name} ({u.reason})"
            for u in plan.unfenceable
        ]
        raise StepFailed("the fence cannot stop every producer; nothing was changed: " + "; ".join(named))
    if recorded is None:  # the first run: what will change, kept before anything does
        recorded = ctx.record.notes.fence = plan.note(reading.selected(), reading.inventory("source")[1])
        ctx.save()
    denied, removed = list(recorded.deny), list(recorded.remove)
    ctx.say(fencing_words(ctx.profile, len(denied), len(removed)))
    ctx.ask("source", admin_ops.create_acls, denied, ctx.timeout)
    ctx.ask("source", admin_ops.delete_acls, removed, ctx.timeout)
    ctx.note_acls("source", [("added", a) for a in denied] + [("removed", a) for a in removed])
    unfenceable = [f"{u.binding.words()} ({u.reason})" for u in plan.unfenceable]
    samples = _settled(ctx, recorded, unfenceable)
    ends = samples[-1].ends
    ctx.record.notes.fenced_ends = [FencedEnd(t, p, e) for (t, p), e in sorted(ends.items())]
    ctx.save()
    return {"denied": len(denied), "removed": len(removed), "partitions": len(ends), "readings": len(samples)}


def _settled(ctx: Context, recorded: FenceNote, unfenceable: list[str]) -> list[judge.Sample]:
    """The readings of the fenced partitions up to the first ``QUIET_READINGS`` that agree with no transaction open;
    the step stops when they do not within its deadline (naming who may still write)."""
    partitions = [(t, p) for t in recorded.selected for p in range(recorded.partitions[t])]
    samples: list[judge.Sample] = []
    deadline = time.monotonic() + ctx.timeout
    while True:
        answer = ctx.ask("source", stable_ends, partitions, ctx.timeout, who="mirror")
        samples.append(judge.Sample(answer["ends"], answer["stable"], answer["unread"]))
        held, problems = judge.fence_holds(samples, QUIET_READINGS)
        if held:
            return samples
        if time.monotonic() > deadline:
            if any(p.startswith("still written") for p in problems):
                raise StepFailed(judge.still_written(samples, unfenceable))
            raise StepFailed("the fenced partitions did not settle: " + "; ".join(problems))
        time.sleep(1.0)


def preview(ctx: Context, reading: Reading) -> Preview:
    """The bindings the fence would add and remove, and the grants it could not stop (the dry run then exits 1)."""
    plan = reading.fence_plan()
    # the cut-over's lines as they always were; the way back names the cluster: its source is the forward's target
    on = "" if ctx.forward is None else f"on {ctx.profile.source.alias} "
    return Preview(
        [
            *(f"would stop: {item.binding.words()}: {item.reason}" for item in plan.unfenceable),
            *(f"would add {on}{binding.words()}" for binding in plan.deny),
            *(f"would remove {on}{binding.words()}" for binding in plan.remove),
        ],
        refused=bool(plan.unfenceable),
    )


STEP = Step("fence", run, preview)
