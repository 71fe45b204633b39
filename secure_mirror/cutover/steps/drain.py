"""drain: the mirror's checkpoint at the fenced ends, then ``verify`` (through the context's identities): the counts
per partition equal on both clusters and the digests matching. The counts are noted for the report."""

from __future__ import annotations

import time

from secure_mirror.cutover import judge
from secure_mirror.cutover.context import Context, Preview, Reading, Step, StepFailed
from secure_mirror.cutover.notes import Count
from secure_mirror.run.checkpoint import mirrored_to
from secure_mirror.verify.compare import verify


def run(ctx: Context) -> dict:
    ends = {(e.topic, e.partition): e.end for e in ctx.record.notes.fenced_ends}
    deadline = time.monotonic() + ctx.timeout
    while True:
        committed = mirrored_to(ctx.profile)
        behind = judge.drain_problems(ends, {tp: committed.get(tp) for tp in ends}, {}, {}, {})
        if not behind:
            break
        if time.monotonic() > deadline:
            raise StepFailed(behind[0] + "; is the mirror running? run this command again once it caught up")
        time.sleep(1.0)
    result = verify(ctx.profile, identities=ctx.identities)
    source = {(c.topic, c.partition or 0): c.source_records for c in result.comparisons}
    target = {(c.topic, c.partition or 0): c.target_records for c in result.comparisons}
    unread = {(u["topic"], u["partition"] or 0): u["why"] for u in result.unread}
    problems = judge.drain_problems(ends, {tp: committed.get(tp) for tp in ends}, source, target, unread)
    if not result.ok and not problems:
        problems = ["verify does not match: run `secure-mirror verify PROFILE` for the records that differ"]
    ctx.record.notes.counts = [
        Count(t, p, source.get((t, p)), target.get((t, p))) for t, p in sorted(set(source) | set(target))
    ]
    ctx.save()
    if problems:
        raise StepFailed("; ".join(problems))
    return {"records": sum(source.values()), "partitions": len(source)}


def preview(_ctx: Context, reading: Reading) -> Preview:
    topics = len(reading.selected())
    return Preview([f"would wait for the mirror to reach the fenced ends of {topics} topic(s), then verify"])


STEP = Step("drain", run, preview)
