"""The cut-over's steps against the clusters (issue 41, docs/cutover.md): each asks (through the identities' own
processes), lets a pure function of ``judge`` or ``fence`` decide, and acts; each can run again after a crash at any
point. What a step is about to change it notes in the record first (``Context.note``), so a re-run and the way back
know it even when the step died half way.

The steps: check (pre-flight passes, the mirror runs, lag 0, a fresh heartbeat, the groups translatable; whether
the consumers' access is in place is recorded, and promote applies what is missing), fence (the producers' grants on
the source changed so they cannot write the selected topics; then the end offsets still and no transaction open),
drain (the mirror's checkpoint at the fenced ends and ``verify`` matching per partition), sync (the groups' last
translation committed on the target; a group with members on the source refused unless forced), stop (the job ends
cleanly, its checkpoint kept), promote (the producers' grants and the consumers' on the target), report (JSON and
Markdown beside the record). The way back (``failback``) runs the same steps with the way back's profile, translates
the groups through the forward's map read the other way as well as its own, and instead of promoting restores both
clusters' bindings to what they were before the cut-over (``restore``).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror import folders
from secure_mirror.cutover import fence, judge, report
from secure_mirror.cutover.state import Record
from secure_mirror.errors import SecureMirrorError
from secure_mirror.identities import Identities
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.kafka.processes import pid_alive
from secure_mirror.preflight import SIDES, run_preflight
from secure_mirror.preflight.model import FAIL
from secure_mirror.preflight.probes.kafka_admin import acls as acl_probes
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile
from secure_mirror.render import consumer_acls
from secure_mirror.run import checkpoint
from secure_mirror.run.clients import stable_ends
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.run.groups import decide
from secure_mirror.run.groups.session import Session
from secure_mirror.run.groups.translate import inverted
from secure_mirror.run.lag import lag, lag_heartbeat
from secure_mirror.verify.compare import verify

ADMIN = "admin"
QUIET_READINGS = 3  # end offsets unchanged over this many readings, a second apart, and the fence holds
CONSUMER_ACCESS = "target.audit.consumer-access"


class StepFailed(SecureMirrorError):
    """A step that cannot go on: the sentence says what to fix; ``result`` what it found."""

    def __init__(self, message: str, result: dict | None = None):
        super().__init__(message)
        self.result = result or {}


@dataclass
class Forward:
    """For the way back: the forward cut-over's profile, record and run folder (where its record is kept)."""

    profile: Profile
    record: Record
    run_dir: Path
    path: Path  # the forward record's file


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
    admin_names: dict[Side, str] = field(default_factory=dict)
    forward: Forward | None = None  # set for the way back

    def note(self, key: str, value: object) -> None:
        """Keep ``value`` in the record before acting on it (written at once)."""
        self.record.notes[key] = value
        self.save()

    def ask(self, side: Side, fn: Callable, *args, who: str = ADMIN, **kwargs):
        return self.identities.call(side, fn, *args, who=who, **kwargs)


# ---- check ----------------------------------------------------------------------------------------------------------
def check(ctx: Context) -> dict:
    profile = ctx.profile
    preflight = run_preflight(profile, sides=SIDES, timeout=min(ctx.timeout, 60.0), admin=ctx.admins)
    failed = [c.id for c in preflight.checks if c.status == FAIL]
    if not preflight.ok():
        raise StepFailed(
            f"pre-flight does not pass ({', '.join(failed) or 'unverified permissions'}): run "
            "`secure-mirror preflight PROFILE --as-admin ADMIN` for the fixes"
        )
    access = next((c for c in preflight.checks if c.id == CONSUMER_ACCESS), None)
    consumers = "not audited" if access is None else access.status  # not in place yet: promote applies it
    if not _job_alive(ctx.run_dir):
        raise StepFailed(
            f"the mirror is not running from {ctx.run_dir} (no live job there): start it with "
            f"`secure-mirror run PROFILE --run-dir {ctx.run_dir}` and run this command again"
        )
    rows = _caught_up(ctx)
    beat = lag_heartbeat(profile)
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


def _caught_up(ctx: Context) -> list:
    """The lag rows once the mirror's checkpoint has reached every end offset the source had when the check began
    (producers still write: lag 0 at one instant is not the test, reaching where the source stood is)."""
    rows = lag(ctx.profile)
    unread = [r for r in rows if r.log_end is None]
    if unread:
        shown = ", ".join(f"{r.topic}-{r.partition} ({r.unread or 'not on the source'})" for r in unread[:5])
        raise StepFailed(f"the source's end offsets could not be read: {shown}")
    ends = {(r.topic, r.partition): r.log_end for r in rows if r.log_end is not None}
    deadline = time.monotonic() + ctx.timeout
    while True:
        found = checkpoint.committed_offsets(ctx.profile.mirror.checkpoint_location, ctx.profile)
        committed = dict(found[1]) if found else {}
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


def _job_alive(run_dir: Path) -> bool:
    """Whether the mirror's job runs from ``run_dir``: its pid written, no result yet, the process there."""
    control = ControlFolder(run_dir)
    pid = control.pid()
    return pid is not None and control.result() is None and pid_alive(pid)


# ---- fence ----------------------------------------------------------------------------------------------------------
def read_inventory(ctx: Context, side: Side) -> tuple[list[Acl], dict[str, int]]:
    answer, alias = ctx.ask(side, acl_probes.read_acls, ctx.timeout), ctx.profile.cluster(side).alias
    if "error" in answer:  # named by alias: the way back's source is the forward's target
        raise StepFailed(f"{alias}'s ACLs could not be read as the admin identity: {answer['error']}")
    return list(answer["acls"]), dict(answer["topics"])


def fence_step(ctx: Context) -> dict:
    profile = ctx.profile
    acls, topics = read_inventory(ctx, "source")
    selected = profile.selection().select(list(topics))
    plan = fence.fence_plan(profile, acls, selected)
    recorded = ctx.record.notes.get("fence")
    if recorded is None and plan.unfenceable:
        named = [
            f"{u.binding.principal} through {u.binding.operation} on {u.binding.resource_type} "
            f"{u.binding.pattern_type} {u.binding.resource_name} ({u.reason})"
            for u in plan.unfenceable
        ]
        raise StepFailed("the fence cannot stop every producer; nothing was changed: " + "; ".join(named))
    if recorded is None:  # the first run: what will change, kept before anything does
        ctx.note("fence", _fence_note(plan, selected, topics))
        recorded = ctx.record.notes["fence"]
    removed = [Acl.of(a) for a in recorded["remove"]]
    denied = [Acl.of(a) for a in recorded["deny"]]
    ctx.say(fence.fencing_words(profile, len(denied), len(removed)))
    ctx.ask("source", admin_ops.create_acls, denied, ctx.timeout)
    ctx.ask("source", admin_ops.delete_acls, removed, ctx.timeout)
    _note_acls(ctx, "source", [("added", a) for a in denied] + [("removed", a) for a in removed])
    partitions = [(t, p) for t in recorded["selected"] for p in range(recorded["partitions"][t])]
    samples: list[judge.Sample] = []
    deadline = time.monotonic() + ctx.timeout
    while True:
        answer = ctx.ask("source", stable_ends, partitions, ctx.timeout, who="mirror")
        samples.append(judge.Sample(answer["ends"], answer["stable"], answer["unread"]))
        held, problems = judge.fence_holds(samples, QUIET_READINGS)
        if held:
            break
        if time.monotonic() > deadline:
            if any(p.startswith("still written") for p in problems):
                raise StepFailed(judge.still_written(samples, recorded.get("unfenceable", [])))
            raise StepFailed("the fenced partitions did not settle: " + "; ".join(problems))
        time.sleep(1.0)
    ends = samples[-1].ends
    ctx.note("fenced_ends", [{"topic": t, "partition": p, "end": e} for (t, p), e in sorted(ends.items())])
    return {"denied": len(denied), "removed": len(removed), "partitions": len(ends), "readings": len(samples)}


def _fence_note(plan: fence.FencePlan, selected: list[str], topics: dict[str, int]) -> dict:
    return {
        "remove": [a.to_dict() for a in plan.remove],
        "deny": [a.to_dict() for a in plan.deny],
        "producers": plan.producers,
        "selected": selected,
        "partitions": {t: topics[t] for t in selected},
    }


def _note_acls(ctx: Context, cluster: Side, changes: list[tuple[str, Acl]]) -> None:
    done = list(ctx.record.notes.get("acls", []))
    by = ctx.admin_names.get(cluster, "the admin identity")
    for change, acl in changes:
        entry = {"cluster": cluster, "change": change, "by": by, "binding": acl.to_dict()}
        if entry not in done:
            done.append(entry)
    ctx.note("acls", done)


# ---- drain ----------------------------------------------------------------------------------------------------------
def drain(ctx: Context) -> dict:
    ends = {(e["topic"], e["partition"]): e["end"] for e in ctx.record.notes["fenced_ends"]}
    deadline = time.monotonic() + ctx.timeout
    while True:
        found = checkpoint.committed_offsets(ctx.profile.mirror.checkpoint_location, ctx.profile)
        committed = dict(found[1]) if found else {}
        behind = judge.drain_problems(ends, {tp: committed.get(tp) for tp in ends}, {}, {}, {})
        if not behind:
            break
        if time.monotonic() > deadline:
            raise StepFailed(behind[0] + "; is the mirror running? run this command again once it caught up")
        time.sleep(1.0)
    result = verify(ctx.profile)
    source = {(c.topic, c.partition or 0): c.source_records for c in result.comparisons}
    target = {(c.topic, c.partition or 0): c.target_records for c in result.comparisons}
    unread = {(u["topic"], u["partition"] or 0): u["why"] for u in result.unread}
    problems = judge.drain_problems(ends, {tp: committed.get(tp) for tp in ends}, source, target, unread)
    if not result.ok and not problems:
        problems = ["verify does not match: run `secure-mirror verify PROFILE` for the records that differ"]
    ctx.note(
        "counts",
        [
            {"topic": t, "partition": p, "source": source.get((t, p)), "target": target.get((t, p))}
            for t, p in sorted(set(source) | set(target))
        ],
    )
    if problems:
        raise StepFailed("; ".join(problems))
    return {"records": sum(source.values()), "partitions": len(source)}


# ---- sync -----------------------------------------------------------------------------------------------------------
def groups_session(ctx: Context) -> Session:
    """The groups as the mirror sees them; on the way back with the forward's map read the other way besides its own:
    the records the forward copied carry provenance, the way back skips them and has no segment of them."""
    if ctx.forward is None:
        return Session(ctx.profile)
    with Session(ctx.forward.profile) as forward:
        forward.read_map()
        segments = [seg for found in forward.maps.values() for seg in found]
    return Session(ctx.profile, known=inverted(segments))


def sync(ctx: Context) -> dict:
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
    rows = [
        {
            "group": r.group,
            "topic": r.topic,
            "partition": r.partition,
            "source_offset": r.source_offset,
            "target_offset": r.target_offset,
        }
        for r in plan.rows
    ]
    ctx.note("groups", rows)
    return {"groups": len(ctx.groups), "partitions": len(rows), "committed": sum(len(c) for c in plan.commits.values())}


# ---- stop -----------------------------------------------------------------------------------------------------------
def stop(ctx: Context) -> dict:
    control = ControlFolder(ctx.run_dir)
    pid = control.pid()
    if _job_alive(ctx.run_dir) and pid is not None:
        control.request_stop()
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + ctx.timeout
    while _job_alive(ctx.run_dir):
        if time.monotonic() > deadline:
            raise StepFailed(
                f"the mirror's job (pid {pid}) did not stop within {ctx.timeout:.0f} s; stop it, then "
                "run this command again"
            )
        time.sleep(0.5)
    result = control.result() or {}
    return {"exit_code": result.get("exit_code"), "status": result.get("status", "not running")}


# ---- promote --------------------------------------------------------------------------------------------------------
def promote(ctx: Context) -> dict:
    profile = ctx.profile
    recorded = ctx.record.notes["fence"]
    fenced = fence.FencePlan(producers={k: list(v) for k, v in recorded["producers"].items()})
    target_acls, _ = read_inventory(ctx, "target")
    grants = fence.promote_plan(profile, fenced, target_acls)
    source_acls, source_topics = read_inventory(ctx, "source")
    consumers = consumer_acls.consumer_plan(profile, source_acls, list(source_topics), target_acls)
    added = list(dict.fromkeys([*grants.grant, *consumers.to_add]))
    ctx.say(
        f"promote: granting {len(grants.grant)} producer and {len(consumers.to_add)} consumer binding(s) on the target"
    )
    _note_acls(ctx, "target", [("added", a) for a in added])
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


# ---- restore (the way back) ----------------------------------------------------------------------------------------
def restore(ctx: Context) -> dict:
    """Both clusters' bindings as before the forward cut-over (``fence.restore_plan``); then the forward record is
    kept under another name, so that the forward run folder can be cut over again."""
    forward = ctx.forward
    if forward is None:
        raise StepFailed("restore belongs to the way back; run `secure-mirror failback`")
    plan = fence.restore_plan(forward.record.notes, ctx.record.notes)
    here: dict[str, Side] = {"source": "target", "target": "source"}  # the forward's sides, as the way back names them
    for side in ("source", "target"):
        cluster = here[side]
        _note_acls(ctx, cluster, [("added", a) for a in plan.add[side]] + [("removed", a) for a in plan.delete[side]])
        ctx.ask(cluster, admin_ops.create_acls, plan.add[side], ctx.timeout)
        ctx.ask(cluster, admin_ops.delete_acls, plan.delete[side], ctx.timeout)
    kept = ctx.record.notes.get("forward_record") or str(
        forward.run_dir / f"cutover-{ctx.record.step('restore').started or 'restored'}.json".replace(":", "")
    )
    ctx.note("forward_record", kept)
    if forward.path.exists() and forward.path != Path(kept):
        os.replace(forward.path, kept)
    ctx.say(f"restore: the forward cut-over's record is kept as {kept}; start the forward mirror again")
    return {
        "added": {here[side]: len(plan.add[side]) for side in plan.add},
        "removed": {here[side]: len(plan.delete[side]) for side in plan.delete},
        "forward_record": kept,
    }


# ---- report ---------------------------------------------------------------------------------------------------------
REPORT_JSON, REPORT_MD = "cutover-report.json", "cutover-report.md"


def write_report(ctx: Context) -> dict:
    for name, text in ((REPORT_JSON, report.json_report(ctx.record)), (REPORT_MD, report.markdown_report(ctx.record))):
        folders.replace(ctx.run_dir / name, text, 0o600)
    return {"files": [str(ctx.run_dir / REPORT_JSON), str(ctx.run_dir / REPORT_MD)]}


STEPS: dict[str, Callable[[Context], dict]] = {
    "check": check,
    "fence": fence_step,
    "drain": drain,
    "sync": sync,
    "stop": stop,
    "promote": promote,
    "restore": restore,
    "report": write_report,
}
