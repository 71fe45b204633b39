"""check: pre-flight with the admin's audit passes, the mirror's job runs from the run folder, its checkpoint reaches
the end offsets the source had when the check began, its heartbeat is fresh, and every group can be translated.
Whether the consumers' access is in place on the target is recorded (promote applies what is missing). Every reader
here acts through the context's identities."""

from __future__ import annotations

import time

from secure_mirror.cutover import judge
from secure_mirror.cutover.context import Context, Preview, Reading, Step, StepFailed
from secure_mirror.cutover.steps.stop import job_alive
from secure_mirror.cutover.steps.sync import groups_session
from secure_mirror.preflight import SIDES, run_preflight
from secure_mirror.preflight.model import FAIL
from secure_mirror.run.checkpoint import mirrored_to
from secure_mirror.run.lag import LagRow, lag, lag_heartbeat

CONSUMER_ACCESS = "target.audit.consumer-access"
PREFLIGHT_TIMEOUT = 60.0  # each pre-flight question's; a step's deadline is longer


def run(ctx: Context) -> dict:
    profile = ctx.profile
    preflight = run_preflight(
        profile, sides=SIDES, timeout=min(ctx.timeout, PREFLIGHT_TIMEOUT), admin=ctx.admins, identities=ctx.identities
    )
    failed = [c.id for c in preflight.checks if c.status == FAIL]
    if not preflight.ok():
        raise StepFailed(
            f"pre-flight does not pass ({', '.join(failed) or 'unverified permissions'}): run "
            "`secure-mirror preflight PROFILE --as-admin ADMIN` for the fixes"
        )
    access = next((c for c in preflight.checks if c.id == CONSUMER_ACCESS), None)
    consumers = "not audited" if access is None else access.status  # not in place yet: promote applies it
    if not job_alive(ctx.run_dir):
        raise StepFailed(
            f"the mirror is not running from {ctx.run_dir} (no live job there): start it with "
            f"`secure-mirror run PROFILE --run-dir {ctx.run_dir}` and run this command again"
        )
    rows = _caught_up(ctx)
    beat = lag_heartbeat(profile, identities=ctx.identities)
    age = None if beat is None or beat.age_ms is None else beat.age_ms / 1000
    stale = float(profile.mirror.heartbeats.stale_after_seconds)
    if (why := judge.heartbeat_problem(age, stale, profile.mirror.heartbeats.enabled)) is not None:
        raise StepFailed(why)
    with groups_session(ctx) as session:
        plan = session.observe(ctx.groups).plan()
    if plan.skipped:
        raise StepFailed("; ".join(f"group {g}: {why}" for g, why in plan.skipped.items()))
    return {
        "preflight": "pass",
        "consumer_access": consumers,
        "partitions": len(rows),
        "lag": 0,
        "heartbeat_age_seconds": age,
    }


def _caught_up(ctx: Context) -> list[LagRow]:
    """The lag rows once the mirror's checkpoint has reached every end offset the source had when the check began
    (producers still write: lag 0 at one instant is not the test, reaching where the source stood is)."""
    rows = lag(ctx.profile, identities=ctx.identities)
    unread = [r for r in rows if r.log_end is None]
    if unread:
        shown = ", ".join(f"{r.topic}-{r.partition} ({r.unread or 'not on the source'})" for r in unread[:5])
        raise StepFailed(f"the source's end offsets could not be read: {shown}")
    ends = {(r.topic, r.partition): r.log_end for r in rows if r.log_end is not None}
    deadline = time.monotonic() + ctx.timeout
    while True:
        committed = mirrored_to(ctx.profile)
        behind = {tp: end - (committed.get(tp) or 0) for tp, end in ends.items() if (committed.get(tp) or 0) < end}
        if not behind:
            return rows
        if time.monotonic() > deadline:
            shown = ", ".join(f"{t}-{p} {n}" for (t, p), n in sorted(behind.items())[:5])
            raise StepFailed(
                f"the mirror did not catch up within {ctx.timeout:.0f} s (behind: {shown}); is it running? "
                "(`secure-mirror lag PROFILE`)"
            )
        time.sleep(1.0)


def preview(ctx: Context, _reading: Reading) -> Preview:
    """The check itself, which changes nothing: whether it would pass, or why it would stop."""
    try:
        run(ctx)
    except StepFailed as failed:
        return Preview([f"would stop: {failed}"])
    return Preview(["would pass"])


STEP = Step("check", run, preview)
