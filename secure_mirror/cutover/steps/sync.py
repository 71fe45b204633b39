"""sync: each group's last translation committed on the target (as ``failover --group``); a group with members still
on the source is refused unless forced. On the way back the groups are translated through the forward's offset map
read the other way as well as the way back's own. The groups' offsets on both sides are noted for the report."""

from __future__ import annotations

from secure_mirror.cutover.context import Context, Preview, Reading, Step, StepFailed
from secure_mirror.cutover.notes import GroupOffset
from secure_mirror.cutover.way_back import Reversed
from secure_mirror.errors import BadInputError
from secure_mirror.identities import Identities
from secure_mirror.preflight.checks.base import listed
from secure_mirror.profile.models import Profile
from secure_mirror.run.groups import decide
from secure_mirror.run.groups.session import Session
from secure_mirror.run.groups.translate import inverted


def groups_session(ctx: Context) -> Session:
    """The groups as the mirror sees them, through the context's identities; on the way back with the forward's map
    read the other way besides its own: the records the forward copied carry provenance, the way back skips them and
    has no segment of them. The forward's map is on the way back's source, read there with the same identities."""
    if ctx.forward is None:
        return Session(ctx.profile, identities=ctx.identities)
    with Session(ctx.forward.profile, identities=Reversed(ctx.identities)) as forward:
        forward.read_map()
        segments = [seg for found in forward.maps.values() for seg in found]
    return Session(ctx.profile, known=inverted(segments), identities=ctx.identities)


def all_groups(profile: Profile, identities: Identities) -> list[str]:
    """The source's groups ``mirror.groups`` selects (``cutover --all-groups``), one at least."""
    if not profile.mirror.groups.enabled:
        raise BadInputError("--all-groups needs mirror.groups in the profile; name the groups with --group instead")
    with Session(profile, identities=identities) as session:
        groups = session.selected_groups()
    if not groups:
        raise BadInputError("--all-groups: mirror.groups selects no group on the source; name them with --group")
    return groups


def run(ctx: Context) -> dict:
    with groups_session(ctx) as session:
        observation = session.observe(ctx.groups)
        if refusals := decide.failover_refusals(observation.sources, ctx.force):
            raise StepFailed("; ".join(refusals))
        plan = observation.plan()
        if plan.skipped:
            raise StepFailed("; ".join(f"group {g}: {why}" for g, why in plan.skipped.items()))
        failed = session.write(plan.checkpoints, plan)
    if failed:
        raise StepFailed("; ".join(f"writing {name} on the target failed: {why}" for name, why in failed.items()))
    rows = [GroupOffset(r.group, r.topic, r.partition, r.source_offset, r.target_offset) for r in plan.rows]
    ctx.record.notes.groups = rows
    ctx.save()
    return {"groups": len(ctx.groups), "partitions": len(rows), "committed": sum(len(c) for c in plan.commits.values())}


def preview(ctx: Context, _reading: Reading) -> Preview:
    where = "the target" if ctx.forward is None else ctx.profile.target.alias
    named = f"{len(ctx.groups)} groups ({listed(ctx.groups, 10)})" if len(ctx.groups) > 10 else ", ".join(ctx.groups)
    return Preview([f"would translate and commit {named} on {where}"])


STEP = Step("sync", run, preview)
