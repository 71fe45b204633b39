"""Compare source and target over the mirrored range, in constant memory.

The mirrored range of a source partition runs from where the job started reading it to the offset the
checkpoint committed. Its target is the renamed topic: the same partition when the mirror kept partitions
(``Mirror.keeps_partitions``, the rule the job writes by), else the whole topic. Both sides are read once into
order-independent digests (:mod:`secure_mirror.verify.digest`); only when digests differ is a second pass made
to fetch a few example records of what is missing, extra or duplicated.

With heartbeats on, the result also holds the flow's newest heartbeat on the target (``VerifyResult.heartbeat``,
docs/heartbeats.md): a ``heartbeat: STALE`` line when it is older than ``mirror.heartbeats.stale_after_seconds``,
even when no record moved. It flags a flow that is not alive; ``ok`` (and the exit code) stay about the records.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from secure_mirror.errors import BadInputError, ClusterRefused
from secure_mirror.identities import Caller
from secure_mirror.kafka.processes import IsolatedCallError
from secure_mirror.profile.job_settings import PROVENANCE_PREFIX
from secure_mirror.profile.models import Profile
from secure_mirror.profile.topic_shape import partition_problem
from secure_mirror.run import checkpoint
from secure_mirror.run.clients import end_offsets, given_or_own
from secure_mirror.run.heartbeat_reader import flow_heartbeat
from secure_mirror.run.heartbeats import HeartbeatState
from secure_mirror.verify import scan
from secure_mirror.verify.digest import DEFAULT_CELLS, Digest, difference

EXAMPLES = 5


@dataclass
class Comparison:
    """One source partition (or a whole topic when partitions were not kept) against its target."""

    topic: str
    partition: int | None  # None: the whole topic
    target_topic: str
    source_records: int
    target_records: int
    source_digest: str
    target_digest: str
    missing: int = 0
    extra: int = 0
    duplicated: int = 0
    listed: bool = True  # False: more differences than the sketch can list (counts only)
    examples: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.source_records == self.target_records and self.source_digest == self.target_digest

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


@dataclass
class VerifyResult:
    comparisons: list[Comparison]
    not_mirrored: list[dict]  # source partitions the checkpoint does not know yet (created after the last batch)
    batch: int
    heartbeat: HeartbeatState | None = None  # None: heartbeats off
    partition_counts: list[dict] = field(default_factory=list)  # target topics whose count is not the source's
    unread: list[dict] = field(default_factory=list)  # what could not be read, so not compared: never a match

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons) and not self.unread

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "checkpoint_batch": self.batch,
            "source_records": sum(c.source_records for c in self.comparisons),
            "target_records": sum(c.target_records for c in self.comparisons),
            "comparisons": [c.to_dict() for c in self.comparisons],
            "not_mirrored": self.not_mirrored,
            "partition_counts": self.partition_counts,
            "unread": self.unread,
            **({"heartbeat": self.heartbeat.to_dict()} if self.heartbeat is not None else {}),
        }

    def text(self) -> str:
        lines = []
        for c in self.comparisons:
            where = f"{c.topic}[{c.partition}]" if c.partition is not None else f"{c.topic}[all]"
            state = "OK" if c.ok else "MISMATCH"
            lines.append(
                f"{state:8} {where} -> {c.target_topic}: source {c.source_records}, target {c.target_records}"
                + ("" if c.ok else _differences(c))
            )
            for example in c.examples:
                lines.append(
                    f"         {example['kind']}: {example['topic']}[{example['partition']}]@"
                    f"{example['offset']} key={example['key']!r} value={example['value']!r} "
                    f"headers={example['headers']}"
                )
        for pending in self.not_mirrored:
            lines.append(
                f"PENDING  {pending['topic']}[{pending['partition']}]: {pending['records']} records not "
                "mirrored yet (not in the checkpoint)"
            )
        for shape in self.partition_counts:
            lines.append(f"SHAPE    {shape['finding']}: {shape['fix']}")
        for unread in self.unread:
            part = "all" if unread["partition"] is None else unread["partition"]
            lines.append(
                f"UNREAD   {unread['topic']}[{part}] -> {unread['target_topic']}: the {unread['side']} partition "
                f"could not be read ({unread['why']}): not compared"
            )
        total = self.to_dict()
        verdict = "match" if self.ok else "MISMATCH" if not all(c.ok for c in self.comparisons) else "INCOMPLETE"
        lines.append(
            f"verify: {verdict}: {total['source_records']} source records, {total['target_records']} "
            f"target records over {len(self.comparisons)} comparisons (checkpoint batch {self.batch})"
        )
        if self.heartbeat is not None:
            lines.append(self.heartbeat.text())
        return "\n".join(lines)


def _differences(c: Comparison) -> str:
    if not c.listed:
        return f" (digests differ; more differences than the sketch can list: {c.source_records - c.target_records:+d})"
    return f" (missing {c.missing}, extra {c.extra}, duplicated {c.duplicated})"


@dataclass
class _Plan:
    source_ranges: list[tuple]
    target_ranges: list[tuple]
    groups: dict[tuple, str]  # group -> target topic
    not_mirrored: list[dict]
    partition_counts: list[dict] = field(default_factory=list)
    unread: list[dict] = field(default_factory=list)  # groups left out: a partition of theirs could not be read


def plan_ranges(
    profile: Profile,
    committed: dict,
    initial: dict,
    source_marks: dict,
    target_marks: dict,
    source_unread: dict | None = None,
    target_unread: dict | None = None,
) -> _Plan:
    """Which offsets of which partitions are compared, and how they are grouped (pure; tested on its own). A group
    with a partition that could not be read (``*_unread``: (topic, partition) -> why) is left out and listed."""
    source_ranges, target_ranges, groups, counts = [], [], {}, []
    source_unread, target_unread = source_unread or {}, target_unread or {}
    skipped: dict[tuple, dict] = {}
    topics = sorted({t for t, _ in committed})
    for topic in topics:
        target = profile.target_topic(topic)
        source_parts = sorted(p for t, p in {*source_marks, *source_unread} if t == topic) or sorted(
            p for t, p in committed if t == topic
        )
        target_parts = sorted(p for t, p in {*target_marks, *target_unread} if t == target)
        per_partition = profile.mirror.keeps_partitions(len(source_parts), len(target_parts))
        if (problem := _count_problem(profile, topic, len(source_parts), len(target_parts))) is not None:
            counts.append(problem)
        for partition in sorted(p for t, p in committed if t == topic):
            low = source_marks.get((topic, partition), (0, 0))[0]
            start = max(initial.get((topic, partition), low), low)
            group = (topic, partition if per_partition else None)
            groups[group] = target
            if (why := source_unread.get((topic, partition))) is not None:
                skipped.setdefault(group, {"side": "source", "why": why})
            source_ranges.append((topic, partition, start, committed[(topic, partition)], group))
        for partition in target_parts:
            group = (topic, partition if per_partition else None)
            groups.setdefault(group, target)
            if (why := target_unread.get((target, partition))) is not None:
                skipped.setdefault(group, {"side": "target", "why": why})
                continue
            low, high = target_marks[(target, partition)]
            target_ranges.append((target, partition, low, high, group))
    not_mirrored = [
        {"topic": t, "partition": p, "records": high - low}
        for (t, p), (low, high) in sorted(source_marks.items())
        if (t, p) not in committed and high > low
    ]
    unread = [
        {"topic": group[0], "partition": group[1], "target_topic": groups.pop(group), **found}
        for group, found in sorted(
            skipped.items(), key=lambda item: (item[0][0], -1 if item[0][1] is None else item[0][1])
        )
    ]
    source_ranges = [r for r in source_ranges if r[-1] not in skipped]
    target_ranges = [r for r in target_ranges if r[-1] not in skipped]
    return _Plan(source_ranges, target_ranges, groups, not_mirrored, counts, unread)


def _count_problem(profile: Profile, topic: str, source: int, target: int) -> dict | None:
    """A target topic whose partition count is not its source's and that the job will not grow (mirror.topic_shape),
    where partitions are kept (true or auto), with the fix."""
    if profile.mirror.keep_partition is False or not target:
        return None
    target_topic = profile.target_topic(topic)
    found = partition_problem(topic, target_topic, source, target, profile.mirror.grows_partitions)
    return (
        None if found is None else {"topic": topic, "target_topic": target_topic, "finding": found[0], "fix": found[1]}
    )


def verify(
    profile: Profile, *, cells: int = DEFAULT_CELLS, examples: int = EXAMPLES, identities: Caller | None = None
) -> VerifyResult:
    """Compare ``profile``'s source and target over the range the mirror's checkpoint committed, reading both with
    ``identities`` (the mirror's, left open) or a set of its own."""
    location = profile.mirror.checkpoint_location
    files = checkpoint.snapshot(location, profile)  # one read of a remote checkpoint for both questions
    found = checkpoint.committed_offsets(location, profile, files)
    if found is None:
        raise BadInputError(
            f"nothing was mirrored yet: the checkpoint {location} has no committed batch; run "
            "`secure-mirror run PROFILE --until-caught-up` first"
        )
    batch, committed = found
    try:
        initial = checkpoint.initial_offsets(location, profile, files)
        with given_or_own(profile, identities) as clients:
            return _verify(clients, profile, batch, committed, initial, cells, examples)
    except IsolatedCallError as error:
        if "AUTHORIZATION_FAILED" not in f"{error.code} {error}":
            raise
        raise ClusterRefused(
            f"a cluster refused to let the mirror identity read for verify ({error}); verify reads "
            "the source topics and the target topics: grant the target identity READ on the "
            "target topics"
        ) from None


def _verify(
    clients: Caller, profile: Profile, batch: int, committed: dict, initial: dict, cells: int, examples: int
) -> VerifyResult:
    topics = sorted({t for t, _ in committed})
    ours = clients.call("source", end_offsets, topics, profile.selection().java_pattern())
    theirs = clients.call("target", end_offsets, sorted({profile.target_topic(t) for t in topics}))
    plan = plan_ranges(profile, committed, initial, ours.ends, theirs.ends, ours.unread, theirs.unread)
    keep = provenance_rules(profile, clients.call("target", scan.cluster_id))
    with ThreadPoolExecutor(2) as pool:
        source = pool.submit(clients.call, "source", scan.scan, plan.source_ranges, None, cells, keep["source"])
        target = pool.submit(
            clients.call, "target", scan.scan, plan.target_ranges, PROVENANCE_PREFIX, cells, keep["target"]
        )
        source_digests, target_digests = source.result(), target.result()
    comparisons, differences = _compare(plan, source_digests, target_digests, cells)
    if differences:
        _explain(clients, plan, comparisons, differences, examples, keep)
    heartbeat = flow_heartbeat(profile, clients)
    return VerifyResult(comparisons, plan.not_mirrored, batch, heartbeat, plan.partition_counts, plan.unread)


def provenance_rules(profile: Profile, target_id: str | None) -> dict[str, tuple[str, str, str] | None]:
    """What each side compares (``scan.provenance_keeps``): on the source, not the records that came from the target
    (the sink skips them, docs/provenance.md); on the target, with kept names (identity) and provenance headers, only
    the records this flow wrote (its last ``secure-mirror.cluster`` header names the source), since applications and
    the way back write the same topics."""
    source = (scan.NOT_FROM, f"{PROVENANCE_PREFIX}cluster-id", target_id) if target_id else None
    shared = profile.mirror.rename.rule == "identity" and profile.mirror.provenance_headers
    target = (scan.LAST_FROM, f"{PROVENANCE_PREFIX}cluster", profile.source.alias) if shared else None
    return {"source": source, "target": target}


def _compare(plan: _Plan, source: dict, target: dict, cells: int):
    comparisons, differences = [], {}
    for group in sorted(plan.groups, key=lambda g: (g[0], -1 if g[1] is None else g[1])):
        left, right = source.get(group, Digest(cells)), target.get(group, Digest(cells))
        comparison = Comparison(
            group[0], group[1], plan.groups[group], left.count, right.count, f"{left.total:016x}", f"{right.total:016x}"
        )
        if not comparison.ok:
            diff = difference(left, right)
            comparison.listed = diff is not None
            if diff:
                differences[group] = (comparison, diff)
        comparisons.append(comparison)
    return comparisons, differences


def _explain(
    clients: Caller, plan: _Plan, comparisons: list[Comparison], differences: dict, examples: int, keep: dict
) -> None:
    ids = {ident for _c, diff in differences.values() for ident in diff}
    in_source = clients.call("source", scan.find, plan.source_ranges, ids, None, keep=keep["source"])
    in_target = clients.call("target", scan.find, plan.target_ranges, ids, PROVENANCE_PREFIX, keep=keep["target"])
    for comparison, diff in differences.values():
        for ident, times in sorted(diff.items(), key=lambda item: -abs(item[1])):
            if times > 0:
                kind, count, records = "missing", times, in_source.get(ident, [])
            elif ident in in_source:
                kind, count, records = "duplicated", -times, in_target.get(ident, [])
            else:
                kind, count, records = "extra", -times, in_target.get(ident, [])
            setattr(comparison, kind, getattr(comparison, kind) + count)
            if records and len(comparison.examples) < examples:
                comparison.examples.append({"kind": kind, "times": count, **records[0]})
