"""What group sync and failover ask the clusters, with confluent-kafka, as one side's mirror identity: the source's
groups and their committed offsets, the target's offset map, groups and offsets, and the writes (checkpoints, group
commits). Plain data in and out; the decisions are in :mod:`secure_mirror.run.groups.decide`.

Each function runs in a kept process of its side's identity (``Identities.call``: the identity's own Kerberos
environment) that stays up between calls, so a sync pass costs requests, not a process start and a login; the
clients are kept in the process between calls (``kept_client``) until an error.
"""

from __future__ import annotations

import time
from typing import Any

from secure_mirror.kafka.admin_ops import LOG, asked_in_flight
from secure_mirror.kafka.oauth import token_served
from secure_mirror.kafka.processes import IsolatedCallError, forget_client, kept_client
from secure_mirror.profile.topics import TopicSelection
from secure_mirror.run.groups import checkpoints, offset_map

TIMEOUT = 30.0
MAP_FETCH_WAIT_MS = 10  # the offset map's reader: how long a fetch at its end waits at the broker (read_map)
# and how long one consume() call waits: librdkafka returns a batch when it holds all it asked for (1,000 records) or
# at this timeout, so the map's end (a few end-of-partition events) waited the whole timeout, 1 s a pass before
MAP_POLL_SECONDS = 0.05


def _admin(conf: dict):
    from confluent_kafka.admin import AdminClient

    return kept_client("admin", conf, lambda: token_served(AdminClient({**conf, "logger": LOG}), conf))


def _error_text(exc: BaseException) -> str:
    inner = exc.args[0] if exc.args else exc
    return inner.str() if hasattr(inner, "str") else str(exc)


def topic_partitions(conf: dict, selection: TopicSelection | None, names: list[str] | None = None) -> dict[str, int]:
    """Topic -> partition count, of the topics ``selection`` selects and/or those in ``names`` that exist."""
    metadata = _admin(conf).list_topics(timeout=TIMEOUT)
    wanted = set(names or ())
    return {
        name: len(topic.partitions)
        for name, topic in metadata.topics.items()
        if topic.error is None and (name in wanted or (selection is not None and selection.matches(name)))
    }


def group_states(conf: dict, selection: TopicSelection) -> dict[str, str]:
    """The groups of the cluster that ``selection`` selects, each with its state as Kafka names it (``Stable``,
    ``Empty`` ...): ListGroups, one request per broker (the state since Kafka 2.6, KIP-518; ``Unknown`` before)."""
    listed = _admin(conf).list_consumer_groups(request_timeout=TIMEOUT).result(timeout=TIMEOUT)
    return {g.group_id: _state(g.state) for g in listed.valid if selection.matches(g.group_id)}


def group_ids(conf: dict, selection: TopicSelection) -> list[str]:
    """The groups of the cluster that ``selection`` selects."""
    return sorted(group_states(conf, selection))


def _state(state) -> str:
    return state.name.title() if state is not None else "Unknown"


def committed(conf: dict, groups: list[str], partitions: dict[str, int]) -> dict[str, dict]:
    """group -> {offsets: {(topic, partition): (offset, metadata)}, error} on the partitions of ``partitions`` (topic
    -> count). The groups are asked ``IN_FLIGHT`` at a time (``asked_in_flight``), one OffsetFetch each, naming no partition: the
    broker answers with the group's committed offsets only (naming every partition of the mirrored topics made each
    request and answer as long as their partition count, most of it "no offset"; librdkafka asks one group per
    request)."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    admin = _admin(conf)

    def ask(group: str):
        return admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT)[group]

    return {group: _offsets_entry(future, partitions) for group, future in asked_in_flight(groups, ask)}


def _offsets_entry(future: Any, partitions: dict[str, int]) -> dict:
    entry: dict[str, Any] = {"offsets": {}, "error": None}
    try:
        if isinstance(future, Exception):
            raise future
        entry["offsets"] = {
            (tp.topic, tp.partition): (tp.offset, tp.metadata or "")
            for tp in future.result(TIMEOUT).topic_partitions or ()
            if tp.error is None and tp.offset >= 0 and tp.partition < partitions.get(tp.topic, 0)
        }
    except Exception as exc:  # noqa: BLE001 - one group's refusal (GROUP_AUTHORIZATION_FAILED) is its own row
        entry["error"] = _error_text(exc)
    return entry


def described(conf: dict, groups: list[str]) -> dict[str, dict]:
    """group -> {state, members, error}: DescribeGroups, for the active members a decision needs counted."""
    out = {}
    futures = _admin(conf).describe_consumer_groups(groups, request_timeout=TIMEOUT) if groups else {}
    for group in groups:
        entry: dict[str, Any] = {"state": "Unknown", "members": 0, "error": None}
        out[group] = entry
        try:
            description = futures[group].result(timeout=TIMEOUT)
            entry["state"], entry["members"] = _state(description.state), len(description.members)
        except Exception as exc:  # noqa: BLE001 - each group on its own
            entry["error"] = _error_text(exc)
    return out


def composed(groups: list[str], states: dict[str, dict], offsets: dict[str, dict]) -> dict[str, dict]:
    """group -> {state, members, offsets: {(topic, partition): (offset, metadata)}, error}: :func:`described`'s
    answer and :func:`committed`'s (or the Java Admin's, ``java_offsets``) together; the first error of the two."""
    return {
        group: {
            **states[group],
            "offsets": offsets[group]["offsets"],
            "error": states[group]["error"] or offsets[group]["error"],
        }
        for group in groups
    }


def read_map(conf: dict, topic: str, positions: dict[int, int]) -> tuple[list[offset_map.Segment], dict[int, int], int]:
    """The offset map's records from ``positions`` (partition -> next offset; new partitions from their start) to
    its end, read_committed, assigned (no group is joined or committed): (segments as tuples, the new positions,
    records that are not segments).

    A partition's new position is the offset after the last record delivered, never the consumer's ``position()``:
    with a transaction open in the map (exactly_once writes it in each batch's transaction), librdkafka reports the
    end of a read_committed partition at its high watermark, past the open transaction's records, and a reader that
    resumed there would never read them (a segment lost: its group offsets "before the map" for good). Markers and
    aborted records after the last delivered record are read again by the next pass, and skipped again."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    metadata = _admin(conf).list_topics(topic, timeout=TIMEOUT).topics.get(topic)
    if metadata is None or metadata.error is not None:
        return [], dict(positions), 0
    # A fetch at the map's end waits fetch.wait.max.ms at the broker for records (librdkafka's 500 ms), and the end
    # is known only from its answer: every pass waited that long for nothing. So the reader waits 10 ms, and stops
    # fetching between passes (unassigned), where that would be 100 empty fetches a second.
    settings = {
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": "read_committed",
        "fetch.wait.max.ms": MAP_FETCH_WAIT_MS,
    }
    consumer = kept_client("map", conf, lambda: token_served(Consumer({**conf, **settings, "logger": LOG}), conf))
    partitions = sorted(metadata.partitions)
    consumer.assign([TopicPartition(topic, p, positions.get(p, OFFSET_BEGINNING)) for p in partitions])
    found, bad, new_positions = [], 0, dict(positions)
    at_end: set[int] = set()
    deadline = time.monotonic() + TIMEOUT
    while len(at_end) < len(partitions) and time.monotonic() < deadline:
        for msg in consumer.consume(1000, MAP_POLL_SECONDS):
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF:  # the end, as read_committed sees it
                    at_end.add(msg.partition())
                    continue
                raise IsolatedCallError(f"reading the offset map {topic}: {msg.error().str()}", msg.error().name())
            new_positions[msg.partition()] = msg.offset() + 1
            try:
                found.append(offset_map.decode(msg.key(), msg.value()))
            except offset_map.MapRecordError:
                bad += 1
    consumer.unassign()
    return found, new_positions, bad


def write(
    conf: dict, topic: str, records: list[tuple[bytes, bytes]], commits: dict[str, list[tuple[str, int, int, str]]]
) -> dict[str, str]:
    """Write checkpoint records to ``topic`` (created compacted with one partition when missing, as MirrorMaker 2
    does) and commit ``commits`` (group -> (topic, partition, offset, metadata)); group (or the topic) -> error."""
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition

    errors: dict[str, str] = {}
    if records:
        try:
            _ensure_topic(conf, topic)
            # kept between passes as the admin is: a new producer each pass logged in and connected again
            producer = kept_client(
                "checkpoints", conf, lambda: token_served(Producer({**conf, "acks": "all", "logger": LOG}), conf)
            )
            failed: list[str] = []
            for key, value in records:
                producer.produce(topic, value=value, key=key, partition=0, on_delivery=_on_error(failed))
            left = producer.flush(TIMEOUT)
            if failed or left:
                errors[topic] = failed[0] if failed else f"{left} checkpoint records unacknowledged"
                # none of them sent later, behind the next pass's newer checkpoints of the same keys
                producer.purge()
                producer.flush(0)
                forget_client("checkpoints", conf)
        except Exception as exc:  # noqa: BLE001 - a refused checkpoint topic does not stop the commits
            errors[topic] = _error_text(exc)
            forget_client("checkpoints", conf)  # the next pass writes through a new producer, as before it was kept
    admin = _admin(conf)

    def ask(group: str):
        offsets = [TopicPartition(t, p, o, m) for t, p, o, m in commits[group]]
        request = [ConsumerGroupTopicPartitions(group, offsets)]
        return admin.alter_consumer_group_offsets(request, request_timeout=TIMEOUT)[group]

    for group, future in asked_in_flight(sorted(commits), ask):  # a group each, IN_FLIGHT at a time
        try:
            if isinstance(future, Exception):
                raise future
            refused = [tp.error.str() for tp in future.result(TIMEOUT).topic_partitions if tp.error is not None]
            if refused:
                errors[group] = refused[0]
        except Exception as exc:  # noqa: BLE001 - each group on its own
            errors[group] = _error_text(exc)
    return errors


def _on_error(failed: list[str]):
    def record(err, _msg):
        if err is not None:
            failed.append(err.str())

    return record


def _ensure_topic(conf: dict, topic: str) -> None:
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import NewTopic

    admin = _admin(conf)
    found = admin.list_topics(topic, timeout=TIMEOUT).topics.get(topic)
    if found is not None and found.error is None:
        return
    new = NewTopic(topic, num_partitions=checkpoints.PARTITIONS, config=dict(checkpoints.TOPIC_CONFIG))
    try:
        admin.create_topics([new], operation_timeout=TIMEOUT)[topic].result(TIMEOUT)
    except Exception as exc:
        if not (exc.args and getattr(exc.args[0], "code", lambda: None)() == KafkaError.TOPIC_ALREADY_EXISTS):
            raise
