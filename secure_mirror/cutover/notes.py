"""What the cut-over's steps note in its record (``cutover.json``'s ``notes``), typed: each step writes its note before
it changes what the note names, so a re-run and the way back know it even when the step died half way. A note not
taken yet is absent from the file (``None``, or an empty list, here); the JSON is the one the record always held, so a
record written before these types is read as it was written.

- ``fence``: the fence's plan (:class:`FenceNote`), written before the fence changes anything;
- ``fenced_ends``: each selected partition's end offset once the fence held (:class:`FencedEnd`);
- ``acls``: every binding added or removed, on which cluster, by whom (:class:`AclChange`);
- ``counts``: the records per partition on both clusters, as the drain's ``verify`` counted them (:class:`Count`);
- ``groups``: each group's offsets on both sides, as sync committed them (:class:`GroupOffset`);
- ``forward_record``: on the way back, where its restore kept the forward cut-over's record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from secure_mirror.kafka.acl import Acl
from secure_mirror.profile.cluster import Side


@dataclass(frozen=True)
class FenceNote:
    """The fence's plan as the step applies it: the bindings it removes and the DENYs it adds (both undone by the way
    back), the producers it stops with the selected topics each could write, and the selected topics' partitions."""

    remove: tuple[Acl, ...] = ()
    deny: tuple[Acl, ...] = ()
    producers: dict[str, list[str]] = field(default_factory=dict)
    selected: tuple[str, ...] = ()
    partitions: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "remove": [a.to_dict() for a in self.remove],
            "deny": [a.to_dict() for a in self.deny],
            "producers": {principal: list(topics) for principal, topics in self.producers.items()},
            "selected": list(self.selected),
            "partitions": dict(self.partitions),
        }

    @classmethod
    def of(cls, data: dict[str, Any]) -> FenceNote:
        return cls(
            remove=tuple(map(Acl.of, data.get("remove", []))),
            deny=tuple(map(Acl.of, data.get("deny", []))),
            producers={str(p): [str(t) for t in topics] for p, topics in data.get("producers", {}).items()},
            selected=tuple(str(t) for t in data.get("selected", [])),
            partitions={str(t): int(n) for t, n in data.get("partitions", {}).items()},
        )


@dataclass(frozen=True)
class FencedEnd:
    topic: str
    partition: int
    end: int


@dataclass(frozen=True)
class AclChange:
    cluster: Side  # as the record's profile names it: on the way back, its source is the forward's target
    change: str  # added or removed
    by: str  # the admin identity's principal that made the change
    binding: Acl

    def to_dict(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "change": self.change, "by": self.by, "binding": self.binding.to_dict()}

    @classmethod
    def of(cls, data: dict[str, Any]) -> AclChange:
        return cls(data["cluster"], data["change"], data["by"], Acl.of(data["binding"]))


@dataclass(frozen=True)
class Count:
    topic: str
    partition: int
    source: int | None
    target: int | None


@dataclass(frozen=True)
class GroupOffset:
    group: str
    topic: str
    partition: int
    source_offset: int | None
    target_offset: int | None


@dataclass
class Notes:
    fence: FenceNote | None = None
    fenced_ends: list[FencedEnd] = field(default_factory=list)
    acls: list[AclChange] = field(default_factory=list)
    counts: list[Count] = field(default_factory=list)
    groups: list[GroupOffset] = field(default_factory=list)
    forward_record: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The notes taken, as ``cutover.json`` holds them (a note not taken is left out)."""
        out: dict[str, Any] = {
            "fence": None if self.fence is None else self.fence.to_dict(),
            "fenced_ends": [asdict(e) for e in self.fenced_ends],
            "acls": [a.to_dict() for a in self.acls],
            "counts": [asdict(c) for c in self.counts],
            "groups": [asdict(g) for g in self.groups],
            "forward_record": self.forward_record,
        }
        return {key: value for key, value in out.items() if value not in (None, [])}

    @classmethod
    def of(cls, data: dict[str, Any]) -> Notes:
        fence = data.get("fence")
        return cls(
            fence=None if fence is None else FenceNote.of(fence),
            fenced_ends=[FencedEnd(**e) for e in data.get("fenced_ends", [])],
            acls=[AclChange.of(a) for a in data.get("acls", [])],
            counts=[Count(**c) for c in data.get("counts", [])],
            groups=[GroupOffset(**g) for g in data.get("groups", [])],
            forward_record=data.get("forward_record"),
        )
