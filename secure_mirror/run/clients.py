"""The mirror's identities as lag, verify and group sync use them (:func:`inspection`), and what they ask in the
identity's process: lag and verify read both clusters with the same identities the job uses."""

from __future__ import annotations

from secure_mirror.identities import Identities
from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.kafka.identity import ClientConf
from secure_mirror.kafka.oauth import token_served
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile


def inspection(profile: Profile) -> Identities:
    """``with inspection(profile) as clients: clients.call("source", fn, *args)`` runs ``fn(conf, *args)`` as the
    side's mirror identity. The source is seen as the job reads it (end offsets, records: its isolation level), and
    both sides name a group under the prefix the rendered ACLs grant READ on (nothing is ever committed to it)."""
    group = {"group.id": f"{profile.group_prefix}-inspect"}
    settings: dict[Side, ClientConf] = {"source": {**profile.mirror.source_consumer_settings, **group}, "target": group}
    return Identities.for_profile(profile, settings=settings, prefix="secure-mirror-clients-")


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


def watermarks(
    conf: dict, topics: list[str] | None = None, java_pattern: str | None = None, timeout: float = 30.0
) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (low, high) for ``topics`` and/or the topics ``java_pattern`` selects."""
    from confluent_kafka import TopicPartition

    from secure_mirror.profile.javaregex import compile_java

    consumer = _consumer(conf)
    try:
        metadata = consumer.list_topics(timeout=timeout)
        pattern = compile_java(java_pattern) if java_pattern else None
        wanted = set(topics or [])
        out = {}
        for name, topic in metadata.topics.items():
            if name in wanted or (pattern is not None and pattern.fullmatch(name)):
                for partition in topic.partitions:
                    low, high = consumer.get_watermark_offsets(TopicPartition(name, partition), timeout=timeout)
                    out[(name, partition)] = (low, high)
        return out
    finally:
        consumer.close()
