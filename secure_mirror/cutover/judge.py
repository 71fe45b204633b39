"""The cut-over's decisions between asking the clusters and acting (issue 41): pure functions over plain data that
the steps read (end offsets, last stable offsets, lag rows, counts, a heartbeat's age), each returning the problems
as sentences that say what to fix; an empty list lets the step go on. Unit-tested on their own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from secure_mirror.profile import policy

Partition = tuple[str, int]


@dataclass(frozen=True)
class Sample:
    """One reading of the source's selected partitions after the fence: each partition's end offset (the high
    watermark) and last stable offset (what a read_committed reader may read up to), and what could not be read."""

    ends: dict[Partition, int]
    stable: dict[Partition, int]
    unread: dict[Partition, str]


def _name(partition: Partition) -> str:
    return f"{partition[0]}-{partition[1]}"


def _listed(partitions: Sequence[Partition], most: int = 5) -> str:
    return policy.some_of([_name(p) for p in sorted(partitions)], most)


def fence_holds(samples: Sequence[Sample], quiet: int) -> tuple[bool, list[str]]:
    """Whether the fenced partitions are still: the last ``quiet`` samples agree on every end offset, every partition
    was read in each, and no transaction is open (last stable offset = end offset). (done, why not yet)."""
    if len(samples) < quiet:
        return False, [f"{len(samples)} of {quiet} readings taken"]
    last = samples[-quiet:]
    problems = []
    unread = sorted({p for sample in last for p in sample.unread})
    if unread:
        problems.append(f"could not read {_listed(unread)}: {last[-1].unread.get(unread[0]) or 'not answered'}")
    moving = sorted({p for sample in last[1:] for p, end in sample.ends.items() if last[0].ends.get(p) != end})
    if moving:
        problems.append(f"still written after the fence: {_listed(moving)}")
    open_ = sorted(p for p, end in last[-1].ends.items() if last[-1].stable.get(p, end) < end)
    if open_:
        problems.append(f"a transaction is still open on {_listed(open_)} (last stable offset below the end)")
    return not problems, problems


def still_written(samples: Sequence[Sample], unfenceable: Sequence[str]) -> str:
    """The sentence the fence step stops with when the source keeps moving: the partitions, and who may be writing."""
    first, last = samples[0], samples[-1]
    moving = sorted(p for p, end in last.ends.items() if first.ends.get(p) != end)
    who = (
        f"grants the fence could not remove: {'; '.join(unfenceable)}"
        if unfenceable
        else "no ACL grant lets anyone else write them: a super user, or a broker with allow.everyone.if.no.acl.found"
    )
    return (
        f"records are still written to {_listed(moving)} after the fence ({who}); stop that producer, then run the "
        "same command again"
    )


def drain_problems(
    fenced_ends: dict[Partition, int],
    committed: dict[Partition, int | None],
    source_counts: dict[Partition, int],
    target_counts: dict[Partition, int],
    unread: dict[Partition, str],
) -> list[str]:
    """Why the mirror has not yet copied the last records: a partition whose committed offset is below its fenced
    end (or not committed), one not read, or one whose record counts differ between the clusters."""
    problems = []
    behind = sorted(p for p, end in fenced_ends.items() if (committed.get(p) or 0) < end)
    if behind:
        lag = sum(end - (committed.get(p) or 0) for p, end in fenced_ends.items() if p in behind)
        problems.append(f"the mirror is {lag} record(s) behind the fenced ends on {_listed(behind)}")
    if unread:
        problems.append(f"could not count {_listed(list(unread))}: {next(iter(unread.values()))}")
    differ = sorted(p for p in fenced_ends if p not in unread and source_counts.get(p) != target_counts.get(p))
    if differ and not behind:
        shown = [
            f"{_name(p)} {source_counts.get(p)} on the source, {target_counts.get(p)} on the target" for p in differ
        ]
        problems.append("the counts differ: " + "; ".join(shown[:5]))
    return problems


def heartbeat_problem(age_seconds: float | None, stale_after: float, enabled: bool) -> str | None:
    """Why the mirror's heartbeat does not show a live flow, or None (heartbeats off: the check says so elsewhere)."""
    if not enabled:
        return None
    if age_seconds is None:
        return "no heartbeat of this flow on the target: is the mirror running with heartbeats on?"
    if age_seconds > stale_after:
        return (
            f"the newest heartbeat is {age_seconds:.0f} s old (stale after {stale_after:.0f} s): is the mirror running?"
        )
    return None
