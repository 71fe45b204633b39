"""The topics: those the identity may describe, its operations on each, whether the brokers would create them, and
READ and DESCRIBE_CONFIGS proven by doing where the brokers report no operations."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TypedDict, final

from secure_mirror.kafka.admin_ops import record_batches
from secure_mirror.preflight.probes.kafka_admin import Admin, Refused, error_code, operation_names, probe_consumer

REFUSED_TOPIC = "TOPIC_AUTHORIZATION_FAILED"
EXISTS = "TOPIC_ALREADY_EXISTS"


# Operations are Kafka's names (READ, DESCRIBE ...); None where the brokers report none (before Kafka 2.3).
@final
class Described(TypedDict):
    partitions: int
    operations: list[str] | None


TopicAnswer = Described | Refused


def list_topics(admin: Admin) -> dict[str, int]:
    """Topic name -> partition count, for the topics this identity may describe (as a consumer sees them)."""
    metadata = admin.client.list_topics(timeout=admin.timeout)
    return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}


def describe_topics(admin: Admin, names: list[str]) -> dict[str, TopicAnswer]:
    """name -> its partitions and the identity's operations on it, or the error code; one request."""
    from confluent_kafka import TopicCollection

    if not names:
        return {}
    futures = admin.client.describe_topics(
        TopicCollection(list(names)), include_authorized_operations=True, request_timeout=admin.request
    )
    out: dict[str, TopicAnswer] = {}
    for name, fut in futures.items():
        try:
            desc = fut.result()
            out[name] = {"partitions": len(desc.partitions), "operations": operation_names(desc.authorized_operations)}
        except Exception as exc:  # noqa: BLE001 - per-topic errors are data here
            out[name] = {"error": error_code(exc)}
    return out


def validate_create(admin: Admin, topics: dict[str, int]) -> dict[str, str | None]:
    """name -> None when the broker would create the topic, else the error code (validate_only: nothing is created)."""
    from confluent_kafka.admin import NewTopic

    futures = {}
    for batch in record_batches(topics):  # the controller refuses a request of too many records, validate_only too
        new = [NewTopic(t, num_partitions=p) for t, p in batch.items()]
        futures.update(admin.client.create_topics(new, validate_only=True, request_timeout=admin.request))
    out: dict[str, str | None] = {}
    for name, fut in futures.items():
        try:
            fut.result()
            out[name] = None
        except Exception as exc:  # noqa: BLE001
            out[name] = error_code(exc)
    return out


APPEARING_SECONDS = 10.0  # how long a topic that appeared between the two questions is described again


def undescribed(described: Mapping[str, TopicAnswer], created: Mapping[str, str | None]) -> dict[str, str]:
    """The topics ``validate_create`` found existing whose description failed with another error than the
    authorizer's refusal -> that error: neither hidden from the identity nor still to create."""
    return {
        t: str(described[t].get("error"))
        for t, code in created.items()
        if code == EXISTS and described[t].get("error") not in (None, REFUSED_TOPIC)
    }


def appeared(
    admin: Admin, described: dict[str, TopicAnswer], created: dict[str, str | None]
) -> tuple[dict[str, TopicAnswer], dict[str, str | None]]:
    """``described_again`` with this client's ``describe_topics``, for ``APPEARING_SECONDS``."""
    return described_again(lambda names: describe_topics(admin, names), described, created, APPEARING_SECONDS)


def described_again(
    describe: Callable[[list[str]], dict[str, TopicAnswer]],
    described: dict[str, TopicAnswer],
    created: dict[str, str | None],
    seconds: float,
    pause: float = 0.5,
) -> tuple[dict[str, TopicAnswer], dict[str, str | None]]:
    """(``described``, ``created``) with the topics that appeared between the two questions described again: a
    topic ``undescribed`` names was created in between (by a running mirror: its checkpoints topic, say), was not
    yet known to the broker that answered, or could not be described then (its leader moving). It is described until
    found or ``seconds`` pass; one found leaves ``created``. One never found stays as it was: existing, and not
    described (judged unverified, never as hidden from the identity)."""
    described, created = dict(described), dict(created)
    deadline = time.monotonic() + seconds
    while waiting := list(undescribed(described, created)):
        for name, answer in describe(waiting).items():
            described[name] = answer
            if "error" not in answer:
                del created[name]
        if time.monotonic() > deadline:
            break
        time.sleep(pause)
    return described, created


# ---- asking by doing, where brokers before Kafka 2.3 report no authorized operations ------------------------
def fetch_probe(admin: Admin, topics: list[str], group: str) -> dict[str, str | None]:
    """topic -> None when a fetch at the end of its first partition was answered (READ proven; no record is kept),
    else the error code (``TOPIC_AUTHORIZATION_FAILED``: no READ; ``NO_ANSWER``)."""
    from confluent_kafka import OFFSET_END, KafkaError, TopicPartition

    consumer = probe_consumer(admin, group, **{"enable.partition.eof": True})
    answers: dict[str, str | None] = {}
    try:
        consumer.assign([TopicPartition(t, 0, OFFSET_END) for t in topics])  # no group join: no group READ needed
        deadline = time.monotonic() + admin.timeout * 2
        while len(answers) < len(topics) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.topic() in answers:
                continue
            error = message.error()
            if error is None or error.code() == KafkaError._PARTITION_EOF:
                answers[message.topic()] = None  # the broker answered the fetch
            elif error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                answers[message.topic()] = "TOPIC_AUTHORIZATION_FAILED"
    finally:
        consumer.close()
    return {t: answers.get(t, "NO_ANSWER") for t in topics}


def describe_configs_probe(admin: Admin, topics: list[str]) -> dict[str, str | None]:
    """topic -> None when the brokers answered DescribeConfigs for it (DESCRIBE_CONFIGS proven: the authorizer is
    asked per topic, and nothing changes), else the error code (``TOPIC_AUTHORIZATION_FAILED``: no DESCRIBE_CONFIGS;
    another code or ``NO_ANSWER``: not known). One request."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    if not topics:
        return {}
    resources = [ConfigResource(ResourceType.TOPIC, t) for t in topics]
    try:
        futures = admin.client.describe_configs(resources, request_timeout=admin.request)
    except Exception:  # noqa: BLE001 - the request itself failed: nothing is known
        return dict.fromkeys(topics, "NO_ANSWER")
    out: dict[str, str | None] = {}
    for resource, fut in futures.items():
        try:
            fut.result(timeout=admin.timeout * 2)
            out[resource.name] = None
        except Exception as exc:  # noqa: BLE001 - per-topic errors are data here
            out[resource.name] = error_code(exc)
    return {t: out.get(t, "NO_ANSWER") for t in topics}
