"""The offset map's record format (docs/offset-map.md), shared by the sink that writes it (Java: securemirror.sink)
and the translation that reads it.

The sink writes, on the target, to :func:`secure_mirror.profile.topics.offset_map_topic`, one record per *segment*:
a run of records of one kept source partition whose source offsets ``source .. source+count-1`` all exist and were
written, in that order, at target offsets ``target .. target+count-1`` of the same partition of the target topic. A new
segment starts wherever either side stops being contiguous: a gap upstream (compaction, aborted transaction, marker),
a marker downstream (each exactly_once commit), a batch boundary where the next batch does not continue the last one.

Key: the compact JSON ``["<source topic>",<partition>]`` (UTF-8). Value: compact JSON
``{"v":1,"target_topic":"<name>","source":<offset>,"target":<offset>,"count":<n>}``. In exactly_once the records go
in the batch's transaction (read the map read_committed); in at_least_once after the batch's records are acknowledged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

VERSION = 1


class MapRecordError(ValueError):
    """A record of the map topic that is not a segment of this format."""


@dataclass(frozen=True, order=True)
class Segment:
    topic: str  # the source topic
    partition: int
    source: int  # first source offset
    target: int  # its target offset
    count: int
    target_topic: str = ""

    @property
    def source_end(self) -> int:
        """The source offset after the segment's last record."""
        return self.source + self.count

    @property
    def target_end(self) -> int:
        return self.target + self.count


def encode(segment: Segment) -> tuple[bytes, bytes]:
    key = json.dumps([segment.topic, segment.partition], separators=(",", ":"))
    value = json.dumps(
        {
            "v": VERSION,
            "target_topic": segment.target_topic,
            "source": segment.source,
            "target": segment.target,
            "count": segment.count,
        },
        separators=(",", ":"),
    )
    return key.encode(), value.encode()


def decode(key: bytes | None, value: bytes | None) -> Segment:
    try:
        topic, partition = json.loads(key or b"")
        fields = json.loads(value or b"")
        segment = Segment(
            topic=str(topic),
            partition=int(partition),
            source=int(fields["source"]),
            target=int(fields["target"]),
            count=int(fields["count"]),
            target_topic=str(fields.get("target_topic", "")),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise MapRecordError(f"not an offset map record: {exc}") from exc
    if fields.get("v") != VERSION or segment.count < 1 or segment.source < 0 or segment.target < 0:
        raise MapRecordError(f"not an offset map record of version {VERSION}: {value!r}")
    return segment
