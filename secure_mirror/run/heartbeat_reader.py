"""The newest heartbeat of a flow in the target's ``heartbeats`` topic, for lag and verify (docs/heartbeats.md).

:func:`newest_heartbeat` runs in the target identity's isolated process (``Identities.call``) and returns plain
data; :func:`flow_heartbeat` judges it (``heartbeats.HeartbeatState``). It reads every record newer than the
staleness threshold (found by timestamp), and at least the last :data:`LOOKBACK` records, so a fresh heartbeat is
always found however many flows write the topic, and a stale one's age is told when it is among the last ones.
"""

from __future__ import annotations

import time

from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.kafka.oauth import token_served
from secure_mirror.kafka.processes import IsolatedCallError
from secure_mirror.profile.models import Profile
from secure_mirror.run.heartbeats import TOPIC, HeartbeatState, newest

LOOKBACK = 2000
TIMEOUT = 30.0


def read_start(low: int, high: int, by_time: int, lookback: int = LOOKBACK) -> int:
    """Where to start reading: the last ``lookback`` records, and every record from ``by_time`` (the first offset
    newer than the threshold; -1: none is), never before ``low``."""
    start = max(low, high - lookback)
    return max(low, min(start, by_time)) if by_time >= 0 else start


def newest_heartbeat(conf: dict, source_alias: str, target_alias: str, since_ms: int) -> dict:
    """``{"newest": ms or None}``, or ``{"missing": True}`` when the target has no heartbeats topic."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    settings = {"group.id": "secure-mirror-inspect", **conf, "logger": LOG, "enable.auto.commit": False}
    consumer = token_served(Consumer({**settings, "enable.partition.eof": True}), conf)
    try:
        topic = consumer.list_topics(TOPIC, timeout=TIMEOUT).topics.get(TOPIC)
        if topic is None or topic.error is not None and topic.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return {"missing": True}
        if topic.error is not None:
            raise KafkaException(topic.error)
        low, high = consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=TIMEOUT)
        if high <= low:
            return {"newest": None}
        [found] = consumer.offsets_for_times([TopicPartition(TOPIC, 0, since_ms)], timeout=TIMEOUT)
        consumer.assign([TopicPartition(TOPIC, 0, read_start(low, high, found.offset))])
        records, deadline = [], time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise KafkaException(message.error())
            records.append((message.key(), message.value()))
            if message.offset() >= high - 1:
                break
        return {"newest": newest(records, source_alias, target_alias)}
    finally:
        consumer.close()


def flow_heartbeat(profile: Profile, clients) -> HeartbeatState | None:
    """The flow's heartbeat as lag and verify judge it, read with the target identity (``clients``: the mirror's
    ``Identities``, entered); None when the profile turns heartbeats off."""
    beats = profile.mirror.heartbeats
    if not beats.enabled:
        return None
    now = int(time.time() * 1000)
    aliases = (profile.source.alias, profile.target.alias)
    since = now - beats.stale_after_seconds * 1000
    try:
        answer = clients.call("target", newest_heartbeat, *aliases, since)
    except IsolatedCallError as error:
        return HeartbeatState(*aliases, None, now, beats.stale_after_seconds, problem=str(error)[:300])
    if answer.get("missing"):
        return HeartbeatState(*aliases, None, now, beats.stale_after_seconds, problem="the topic does not exist")
    return HeartbeatState(*aliases, answer["newest"], now, beats.stale_after_seconds)
