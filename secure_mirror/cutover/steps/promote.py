"""promote (the cut-over's last change): each fenced producer granted WRITE and DESCRIBE on the target copies of the
topics it wrote (``plans.promote_plan``, from the producers the fence noted), and the consumers' access
(``acls --consumers``) applied where it is not in place; the bindings noted before they are sent, in one request."""

from __future__ import annotations

from secure_mirror.cutover import plans
from secure_mirror.cutover.context import Context, Preview, Reading, Step
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.render import consumer_acls


def _plans(
    ctx: Context, reading: Reading, fenced: plans.FencePlan
) -> tuple[plans.PromotePlan, consumer_acls.ConsumerPlan, list[Acl]]:
    """The producers' grants, the consumers' plan, and every binding to add on the target, each once."""
    target_acls, _ = reading.inventory("target")
    grants = plans.promote_plan(ctx.profile, fenced, target_acls)
    source_acls, source_topics = reading.inventory("source")
    consumers = consumer_acls.consumer_plan(ctx.profile, source_acls, list(source_topics), target_acls)
    return grants, consumers, list(dict.fromkeys([*grants.grant, *consumers.to_add]))


def run(ctx: Context) -> dict:
    recorded = ctx.record.notes.fence
    fenced = plans.FencePlan(producers={k: list(v) for k, v in (recorded.producers if recorded else {}).items()})
    grants, consumers, added = _plans(ctx, Reading(ctx), fenced)
    ctx.say(
        f"promote: granting {len(grants.grant)} producer and {len(consumers.to_add)} consumer binding(s) on the target"
    )
    ctx.note_acls("target", [("added", a) for a in added])
    ctx.ask("target", admin_ops.create_acls, added, ctx.timeout)
    skipped = [f"{name}: {why}" for name, why in grants.skipped] + [
        f"{item.binding.principal} {item.binding.resource_type} {item.binding.resource_name}: {item.reason}"
        for item in consumers.skipped
    ]
    return {
        "producer_grants": len(grants.grant),
        "consumer_grants": len(consumers.to_add),
        "present": len(grants.present) + len(consumers.present or []),
        "skipped": skipped,
    }


def preview(ctx: Context, reading: Reading) -> Preview:
    *_, added = _plans(ctx, reading, reading.fence_plan())
    return Preview([f"would add on the target {binding.words()}" for binding in added])


STEP = Step("promote", run, preview)
