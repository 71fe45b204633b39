"""MirrorMaker 2's heartbeat records, and when the job may write one (docs/heartbeats.md).

The format is MirrorMaker 2's ``org.apache.kafka.connect.mirror.Heartbeat`` (Kafka's protocol types, big-endian):
the key is ``sourceClusterAlias`` and ``targetClusterAlias`` as Kafka STRINGs (an int16 length, then UTF-8), the
value a version header (int16, 0) and ``timestamp`` (int64, ms since the epoch). One encoder and one decoder, tested
against the bytes of Kafka's own class (tests/support/HeartbeatBytes.java). The topic is MirrorMaker 2's
``heartbeats`` on the target: one partition, compacted, as MirrorMaker 2 creates it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from secure_mirror.profile.topics import HEARTBEATS_TOPIC

TOPIC = HEARTBEATS_TOPIC  # ReplicationPolicy.heartbeatsTopic()
VERSION = 0  # Heartbeat.VERSION
TOPIC_CONFIGS = {"cleanup.policy": "compact"}  # MirrorUtils.createSinglePartitionCompactedTopic
PARTITIONS = 1


class HeartbeatFormatError(ValueError):
    """Bytes that are not a heartbeat of MirrorMaker 2's format (version 0)."""


@dataclass(frozen=True)
class Heartbeat:
    source_alias: str
    target_alias: str
    timestamp_ms: int


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > 0x7FFF:  # Kafka's STRING: an int16 length
        raise HeartbeatFormatError(f"a cluster alias of {len(data)} bytes does not fit Kafka's STRING type")
    return struct.pack(">h", len(data)) + data


def encode_key(source_alias: str, target_alias: str) -> bytes:
    return _string(source_alias) + _string(target_alias)


def encode_value(timestamp_ms: int) -> bytes:
    return struct.pack(">hq", VERSION, timestamp_ms)


def encode(heartbeat: Heartbeat) -> tuple[bytes, bytes]:
    """(key, value) of ``heartbeat`` as MirrorMaker 2 writes them."""
    return encode_key(heartbeat.source_alias, heartbeat.target_alias), encode_value(heartbeat.timestamp_ms)


def _read_string(data: bytes, at: int) -> tuple[str, int]:
    if len(data) < at + 2:
        raise HeartbeatFormatError("the key ends inside a string's length")
    (length,) = struct.unpack_from(">h", data, at)
    if length < 0 or len(data) < at + 2 + length:
        raise HeartbeatFormatError("the key ends inside a string")
    try:
        return data[at + 2 : at + 2 + length].decode("utf-8"), at + 2 + length
    except UnicodeDecodeError:
        raise HeartbeatFormatError("a cluster alias is not UTF-8") from None


def decode(key: bytes | None, value: bytes | None) -> Heartbeat:
    """The heartbeat in a record of the ``heartbeats`` topic; :class:`HeartbeatFormatError` for anything else."""
    if key is None or value is None:
        raise HeartbeatFormatError("a heartbeat has a key and a value")
    source, at = _read_string(key, 0)
    target, at = _read_string(key, at)
    if at != len(key):
        raise HeartbeatFormatError("the key has bytes after the two aliases")
    if len(value) != 10:
        raise HeartbeatFormatError(f"the value is {len(value)} bytes, not 10 (version and timestamp)")
    version, timestamp = struct.unpack(">hq", value)
    if version != VERSION:
        raise HeartbeatFormatError(f"version {version}, and only version {VERSION} is known")
    return Heartbeat(source, target, timestamp)


def newest(records, source_alias: str, target_alias: str) -> int | None:
    """The newest timestamp (ms) among ``records`` ((key, value) pairs) that are heartbeats of this flow; records
    of other flows or of another format are passed over."""
    found = None
    for key, value in records:
        try:
            beat = decode(key, value)
        except HeartbeatFormatError:
            continue
        if (beat.source_alias, beat.target_alias) == (source_alias, target_alias):
            found = beat.timestamp_ms if found is None else max(found, beat.timestamp_ms)
    return found


def beat_due(now: float, last_beat: float | None, interval: float, alive_at: float | None, stale_after: float) -> bool:
    """Whether the job writes a heartbeat at ``now`` (seconds, one monotonic clock): the flow proved alive (a trigger
    completed, or the query waits between triggers: ``alive_at``) within ``stale_after``, and ``interval`` has passed
    since the last heartbeat. A query stuck in one trigger (a source or target that does not answer, a batch that
    never ends) stops the heartbeats."""
    if interval <= 0 or alive_at is None or now - alive_at > stale_after:
        return False
    return last_beat is None or now - last_beat >= interval


def age_text(age_ms: int | None) -> str:
    """``heartbeat 3 s ago`` / ``no heartbeat yet`` for a status line."""
    if age_ms is None:
        return "no heartbeat yet"
    return f"heartbeat {max(age_ms, 0) / 1000:.0f} s ago"


@dataclass(frozen=True)
class HeartbeatState:
    """A flow's newest heartbeat on the target as lag and verify judge it."""

    source_alias: str
    target_alias: str
    newest_ms: int | None  # None: none of this flow found
    now_ms: int
    stale_after_seconds: int
    problem: str | None = None  # the heartbeats topic could not be read: why

    @property
    def age_ms(self) -> int | None:
        return None if self.newest_ms is None else max(0, self.now_ms - self.newest_ms)

    @property
    def stale(self) -> bool:
        age = self.age_ms
        return age is None or age > self.stale_after_seconds * 1000

    def text(self) -> str:
        flow = f"{self.source_alias}->{self.target_alias}"
        if self.problem is not None:
            return f"heartbeat: UNKNOWN: the target's {TOPIC} topic could not be read ({self.problem})"
        if self.newest_ms is None:
            return (
                f"heartbeat: STALE: no heartbeat of {flow} in the target's {TOPIC} topic; the job is not running, or "
                "has not completed a trigger (docs/heartbeats.md)"
            )
        seconds = self.age_ms / 1000 if self.age_ms is not None else 0.0
        if self.stale:
            return (
                f"heartbeat: STALE: the newest heartbeat of {flow} is {seconds:.0f} s old (more than "
                f"{self.stale_after_seconds} s): the job is stopped or stuck (docs/heartbeats.md)"
            )
        return f"heartbeat: {flow} alive, newest {seconds:.0f} s ago"

    def to_dict(self) -> dict:
        return {
            "topic": TOPIC,
            "source": self.source_alias,
            "target": self.target_alias,
            "newest-ms": self.newest_ms,
            "age-ms": self.age_ms,
            "stale-after-seconds": self.stale_after_seconds,
            "stale": self.stale,
            "problem": self.problem,
        }
