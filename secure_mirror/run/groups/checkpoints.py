"""MirrorMaker 2's checkpoint records, byte for byte (Kafka's ``org.apache.kafka.connect.mirror.Checkpoint``), so
``RemoteClusterUtils.translateOffsets(props, "<source alias>", group, timeout)`` and MirrorMaker 2's
``CheckpointFormatter`` read ours unchanged from ``<source alias>.checkpoints.internal`` on the target.

Kafka's protocol types, big-endian: a STRING is an INT16 length and its UTF-8 bytes.
Key: ``group`` STRING, ``topic`` STRING (the topic's name on the target, as MirrorMaker 2's
``renameTopicPartition`` gives it), ``partition`` INT32.
Value: a header ``version`` INT16 (0), then ``upstreamOffset`` INT64 (the group's source offset), ``offset`` INT64
(the target offset it translates to), ``metadata`` STRING (the source commit's metadata, or empty).
The topic is compacted with one partition (MirrorMaker 2's ``createSinglePartitionCompactedTopic``): the newest
record of a (group, topic, partition) is the one that counts.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

VERSION = 0
TOPIC_CONFIG = {"cleanup.policy": "compact"}
PARTITIONS = 1
_SHORT, _INT, _LONG = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
MAX_STRING = 32767  # Kafka's STRING: an INT16 length


class CheckpointFormatError(ValueError):
    """Bytes that are not a checkpoint record of version 0."""


@dataclass(frozen=True, order=True)
class Checkpoint:
    group: str
    topic: str  # the topic's name on the target
    partition: int
    upstream_offset: int  # the group's committed offset on the source
    downstream_offset: int  # the translated offset on the target
    metadata: str = ""


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > MAX_STRING:
        raise CheckpointFormatError(f"a string of {len(data)} bytes does not fit Kafka's STRING ({MAX_STRING} at most)")
    return _SHORT.pack(len(data)) + data


def encode(checkpoint: Checkpoint) -> tuple[bytes, bytes]:
    """(key, value) as Kafka's ``Checkpoint.recordKey()`` / ``recordValue()`` write them."""
    key = _string(checkpoint.group) + _string(checkpoint.topic) + _INT.pack(checkpoint.partition)
    value = (
        _SHORT.pack(VERSION)
        + _LONG.pack(checkpoint.upstream_offset)
        + _LONG.pack(checkpoint.downstream_offset)
        + _string(checkpoint.metadata)
    )
    return key, value


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, size: int) -> bytes:
        if self.at + size > len(self.data):
            raise CheckpointFormatError(f"{len(self.data)} bytes end inside a field at byte {self.at}")
        piece = self.data[self.at : self.at + size]
        self.at += size
        return piece

    def number(self, kind: struct.Struct) -> int:
        return int(kind.unpack(self.take(kind.size))[0])

    def string(self) -> str:
        size = self.number(_SHORT)
        if size < 0:
            raise CheckpointFormatError("a null string where Kafka's STRING allows none")
        try:
            return self.take(size).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CheckpointFormatError(f"a string that is not UTF-8: {exc}") from None


def decode(key: bytes, value: bytes) -> Checkpoint:
    """The checkpoint of a record of the checkpoints topic (as Kafka's ``Checkpoint.deserializeRecord``)."""
    k, v = _Reader(key), _Reader(value)
    group, topic, partition = k.string(), k.string(), k.number(_INT)
    version = v.number(_SHORT)
    if version != VERSION:
        raise CheckpointFormatError(f"checkpoint version {version}; only version {VERSION} exists")
    upstream, downstream, metadata = v.number(_LONG), v.number(_LONG), v.string()
    return Checkpoint(group, topic, partition, upstream, downstream, metadata)
