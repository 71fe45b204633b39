"""The harness's admin calls: one admin client per configuration, kept (:func:`kept`: polling with a new one each
time would log in each time) until the brokers go (:func:`drop_kept`); a dynamic broker setting, topics deleted and
waited for, and consumer groups: offsets committed without joining, read back, groups deleted."""

from __future__ import annotations

import time

from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.admin_ops import LOG

_ADMINS: dict = {}


def kept(conf: dict):
    """One admin client per configuration, kept: polling with a new one each time would log in each time."""
    from confluent_kafka.admin import AdminClient

    key = tuple(sorted((k, str(v)) for k, v in conf.items()))
    if key not in _ADMINS:
        _ADMINS[key] = AdminClient(conf)
    return _ADMINS[key]


def drop_kept() -> None:
    """The kept admin clients go (before the brokers they talk to)."""
    _ADMINS.clear()


def set_on_brokers(conf: dict, name: str, value: str, timeout: float = 30.0) -> None:
    """Set the dynamic broker setting ``name`` on every broker of the cluster ``conf`` reaches (each takes it at once,
    without a restart)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = kept(conf)
    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    brokers = admin.list_topics(timeout=timeout).brokers
    resources = [ConfigResource(ResourceType.BROKER, str(b), incremental_configs=[entry]) for b in brokers]
    for future in admin.incremental_alter_configs(resources, request_timeout=timeout).values():
        future.result(timeout=timeout)


def delete_groups(conf: dict, groups: list[str]) -> None:
    """Delete those consumer ``groups`` that exist (the positions of an earlier exactly_once run)."""
    if not groups:
        return
    for future in kept(conf).delete_consumer_groups(groups, request_timeout=30).values():
        try:
            future.result(timeout=30)
        except Exception:  # noqa: BLE001 - GROUP_ID_NOT_FOUND: nothing to forget
            pass


def prefixed_groups(conf: dict, prefix: str) -> list[str]:
    """The consumer groups whose id starts with ``prefix``."""
    listed = kept(conf).list_consumer_groups(request_timeout=30).result(timeout=60)
    return sorted(g.group_id for g in listed.valid if g.group_id.startswith(prefix))


def forget_groups(conf: dict, prefix: str) -> None:
    """Delete every consumer group named ``prefix...`` (an exactly_once job's positions of an earlier run, whichever
    groups its sink keeps them in: they would make the sink skip everything)."""
    if earlier := prefixed_groups(conf, prefix):
        delete_groups(conf, earlier)


def delete_and_wait(conf: dict, topics: list[str], limit: float = 120.0) -> None:
    """Delete those of ``topics`` that exist, and wait (at most ``limit`` seconds) until the broker lists none."""
    present = set(topics) & set(admin_ops.list_topics(conf))
    if not present:
        return
    admin_ops.delete_topics(conf, sorted(present))
    deadline = time.monotonic() + limit
    while present & set(admin_ops.list_topics(conf)) and time.monotonic() < deadline:
        time.sleep(0.5)


def commit(conf: dict, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` (partition -> offset) of ``topic`` for ``group``, as the group's consumer would, without
    joining it."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": group, "enable.auto.commit": False, "logger": LOG})
    consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    consumer.close()


def group_offsets(conf: dict, groups: list[str]) -> dict[str, dict[str, dict[int, int]]]:
    """Each group's committed offsets: topic -> partition -> offset (a group not there: none); one request a group,
    ``admin_ops.IN_FLIGHT`` at a time (``admin_ops.asked_in_flight``)."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    admin = kept(conf)
    out: dict[str, dict[str, dict[int, int]]] = {}

    def ask(group: str):
        return admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]

    for group, future in admin_ops.asked_in_flight(groups, ask):
        try:
            if isinstance(future, Exception):
                raise future
            held = future.result(timeout=60)
        except Exception:  # noqa: BLE001 - no such group there (yet)
            out[group] = {}
            continue
        mine: dict[str, dict[int, int]] = {}
        for tp in held.topic_partitions or []:
            if tp.offset >= 0:
                mine.setdefault(tp.topic, {})[tp.partition] = tp.offset
        out[group] = mine
    return out


def commit_many(conf: dict, offsets: dict[str, dict[str, dict[int, int]]], timeout: float = 120.0) -> dict[str, str]:
    """Commit each group's offsets (group -> topic -> partition -> offset) without joining, one request a group,
    ``admin_ops.IN_FLIGHT`` at a time; group -> error of those refused."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    admin = kept(conf)

    def ask(group: str):
        named = [TopicPartition(t, p, o) for t, ps in offsets[group].items() for p, o in ps.items()]
        return admin.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, named)], request_timeout=timeout
        )[group]

    errors = {}
    for group, future in admin_ops.asked_in_flight(list(offsets), ask):
        try:
            if isinstance(future, Exception):
                raise future
            future.result(timeout=timeout)
        except Exception as exc:  # noqa: BLE001 - said by the caller
            errors[group] = str(exc)
    return errors


def committed_on(conf: dict, group: str, topic: str) -> dict[int, int]:
    """The group's committed offsets of ``topic`` (partitions without one left out)."""
    return group_offsets(conf, [group])[group].get(topic, {})
