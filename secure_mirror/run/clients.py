"""The mirror's identities as lag, verify and group sync use them (:func:`inspection`), and what they ask in the
identity's process: lag and verify read both clusters with the same identities the job uses."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from secure_mirror.identities import Caller, Identities
from secure_mirror.kafka import timeouts
from secure_mirror.kafka.admin_ops import LOG, asked_while_settling
from secure_mirror.kafka.identity import ClientConf
from secure_mirror.kafka.oauth import token_served
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile

# A partition's leader answers these while it is being elected or has just been (a new leader's high watermark not yet
# caught up with its followers): the next answer, a moment later, is the real one.
SETTLING = frozenset({"OFFSET_NOT_AVAILABLE", "NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE"})


def inspection(
    profile: Profile, *, admins: Mapping[Side, Cluster] | None = None, prefix: str = "secure-mirror-clients-"
) -> Identities:
    """``with inspection(profile) as clients: clients.call("source", fn, *args)`` runs ``fn(conf, *args)`` as the
    side's mirror identity. The source is seen as the job reads it (end offsets, records: its isolation level), and
    both sides name a group under the prefix the rendered ACLs grant READ on (nothing is ever committed to it).
    ``admins`` (side -> the admin's cluster block) adds each side's admin identity (``who="admin"``), for a command
    that hands one set down to every reader (the cut-over)."""
    group = {"group.id": f"{profile.group_prefix}-inspect"}
    settings: dict[Side, ClientConf] = {"source": {**profile.mirror.source_consumer_settings, **group}, "target": group}
    return Identities.for_profile(profile, admins=admins, settings=settings, prefix=prefix)


@contextmanager
def given_or_own(profile: Profile, identities: Caller | None) -> Iterator[Caller]:
    """``identities`` when given (used and left open: they are the caller's, as httpx's client leaves the transport
    it was given), else the mirror's own for this one read (:func:`inspection`), closed after it."""
    if identities is not None:
        yield identities
        return
    with inspection(profile) as own:
        yield own


# ---- functions run in the identity's process ---------------------------------------------------------------
def _consumer(conf: dict):
    from confluent_kafka import Consumer

    return token_served(
        Consumer(
            {
                "group.id": "secure-mirror-inspect",
                **conf,
                "logger": LOG,
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
            }
        ),
        conf,
    )


@dataclass(frozen=True)
class EndOffsets:
    """What ``end_offsets`` read: each partition's (low, high) watermarks, and the partitions it could not read with
    why (no leader, or a leader that did not answer): callers report those, never 0 lag or a match for them."""

    ends: dict[tuple[str, int], tuple[int, int]]
    unread: dict[tuple[str, int], str] = field(default_factory=dict)


def end_offsets(
    conf: dict, topics: list[str] | None = None, java_pattern: str | None = None, timeout: float = 30.0
) -> EndOffsets:
    """(low, high) per partition of ``topics`` and/or the topics ``java_pattern`` selects; a partition without a leader,
    or whose leader does not answer within ``timeout``, is unread (the other partitions of a leader that did not
    answer are not asked again: a broker down costs one wait, not one per partition). A leader just elected is asked
    again while it settles (:data:`SETTLING`), for up to ``timeout``."""
    from confluent_kafka import KafkaException, TopicPartition

    from secure_mirror.profile.javaregex import compile_java

    consumer = _consumer(conf)
    try:
        metadata = consumer.list_topics(timeout=timeout)
        pattern = compile_java(java_pattern) if java_pattern else None
        wanted = set(topics or [])
        ends: dict[tuple[str, int], tuple[int, int]] = {}
        unread: dict[tuple[str, int], str] = {}
        silent: dict[int, str] = {}  # leader -> why it did not answer
        for name, topic in metadata.topics.items():
            if not (name in wanted or (pattern is not None and pattern.fullmatch(name))):
                continue
            for partition, found in topic.partitions.items():
                if found.leader < 0:  # (a replica out of sync alone does not stop reading: not asked about)
                    unread[(name, partition)] = f"no leader ({found.error or 'none elected'})"
                elif found.leader in silent:
                    unread[(name, partition)] = silent[found.leader]
                else:
                    asked = partial(consumer.get_watermark_offsets, TopicPartition(name, partition), timeout=timeout)
                    try:
                        ends[(name, partition)] = asked_while_settling(asked, _settling, timeout)
                    except KafkaException as error:
                        silent[found.leader] = f"its leader, broker {found.leader}, did not answer ({error.args[0]})"
                        unread[(name, partition)] = silent[found.leader]
        return EndOffsets(ends, unread)
    finally:
        consumer.close()


def _settling(error: Exception) -> bool:
    from confluent_kafka import KafkaException

    return isinstance(error, KafkaException) and error.args[0].name() in SETTLING


def watermarks(
    conf: dict, topics: list[str] | None = None, java_pattern: str | None = None, timeout: float = 30.0
) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (low, high) for ``topics`` and/or the topics ``java_pattern`` selects; an error when a
    partition could not be read (``end_offsets`` says which and why)."""
    marks = end_offsets(conf, topics, java_pattern, timeout)
    if marks.unread:
        (topic, partition), why = next(iter(sorted(marks.unread.items())))
        raise RuntimeError(f"{len(marks.unread)} partition(s) could not be read, {topic}[{partition}]: {why}")
    return marks.ends


def stable_ends(conf: dict, partitions: list[tuple[str, int]], timeout: float = 30.0) -> dict:
    """Each partition's end offset and last stable offset (ListOffsets LATEST, read_uncommitted and read_committed):
    {"ends": {tp: end}, "stable": {tp: lso}, "unread": {tp: why}}. A transaction left open keeps the last stable
    offset below the end."""
    from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = token_served(AdminClient({**conf, "logger": LOG}), conf)
    asked = {TopicPartition(topic, partition): OffsetSpec.latest() for topic, partition in partitions}
    out: dict[str, dict] = {"ends": {}, "stable": {}, "unread": {}}
    if not asked:
        return out
    for key, level in (("ends", IsolationLevel.READ_UNCOMMITTED), ("stable", IsolationLevel.READ_COMMITTED)):
        futures = admin.list_offsets(asked, isolation_level=level, request_timeout=timeouts.admin_request(timeout))
        for tp, future in futures.items():
            try:
                out[key][(tp.topic, tp.partition)] = future.result(timeout=timeout).offset
            except KafkaException as error:
                out["unread"][(tp.topic, tp.partition)] = str(error.args[0])
    return out
