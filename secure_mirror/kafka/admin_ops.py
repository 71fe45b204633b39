"""Admin, produce and consume calls with confluent-kafka. Each takes a librdkafka config dict and is meant
to run in the identity's own process (``kafka/processes.py``), with its own Kerberos environment."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from secure_mirror.kafka import timeouts
from secure_mirror.kafka.acl import Acl
from secure_mirror.kafka.oauth import token_served

# librdkafka's own log lines go to this logger (quiet unless the CLI is run with --verbose).
LOG = logging.getLogger("secure_mirror.librdkafka")
# Requests sent at once, one group each, before their answers are read (:func:`asked_in_flight`): a broker serves a
# connection's requests one after another, and 10,000 sent at once waited past the timeout (librdkafka 2.8.0 then
# failed an assertion and ended the process). 500 in flight keep the broker busy without a queue of many seconds.
IN_FLIGHT = 500
T = TypeVar("T")
SETTLE_PAUSE = 0.5  # seconds between two questions to a leader or coordinator that is moving
# A group's coordinator answers these while it moves (a broker just stopped or started) or loads the group.
COORDINATOR_MOVING = frozenset({"NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_LOAD_IN_PROGRESS"})


def _admin(conf: dict):
    from confluent_kafka.admin import AdminClient

    return token_served(AdminClient({**conf, "logger": LOG}), conf)


def _wait(futures: dict, timeout: float) -> None:
    for fut in futures.values():
        fut.result(timeout=timeout)


# Kafka's controller turns one request into at most this many metadata records, else refuses all of it
# (POLICY_VIOLATION: "Unable to perform excessively large batch operation", ``QuorumController.MAX_RECORDS_PER_USER_OP``;
# "Excessively large number of partitions per request" past as many partitions), validate_only too. Creating a topic
# makes one record for the topic, one per partition and one per config entry; deleting one, one record.
MAX_RECORDS_PER_REQUEST = 10_000


def record_batches(
    topics: dict[str, int], extra: int = 0, limit: int = MAX_RECORDS_PER_REQUEST
) -> list[dict[str, int]]:
    """``topics`` (name -> partitions) in order, cut into creation requests of at most ``limit`` records each (a topic
    and its partitions, plus ``extra`` config records per topic); a topic over the limit alone gets a request of its
    own, for the broker to refuse it by name."""
    batches: list[dict[str, int]] = []
    total = limit + 1
    for name, partitions in topics.items():
        weight = 1 + max(partitions, 1) + extra
        if total + weight > limit:
            batches.append({})
            total = 0
        batches[-1][name] = partitions
        total += weight
    return batches


def create_topics(
    conf: dict,
    topics: dict[str, int],
    timeout: float = 30.0,
    config: dict[str, str] | None = None,
    replication_factor: int = 1,
) -> None:
    """Create ``topics`` (name -> partitions), each with ``replication_factor`` replicas (-1: the brokers' default;
    brokers before Kafka 2.4 know no default)."""
    from confluent_kafka.admin import NewTopic

    admin = _admin(conf)  # keep the client referenced until its futures are done
    for batch in record_batches(topics, len(config or {})):
        new = [
            NewTopic(t, num_partitions=p, replication_factor=replication_factor, config=dict(config or {}))
            for t, p in batch.items()
        ]
        _wait(admin.create_topics(new, operation_timeout=timeouts.admin_request(timeout)), timeout)


def delete_topics(conf: dict, topics: list[str], timeout: float = 30.0) -> None:
    admin, within = _admin(conf), timeouts.admin_request(timeout)
    for start in range(0, len(topics), MAX_RECORDS_PER_REQUEST):
        _wait(admin.delete_topics(topics[start : start + MAX_RECORDS_PER_REQUEST], operation_timeout=within), timeout)


def list_topics(conf: dict, timeout: float = 30.0) -> dict[str, int]:
    admin = _admin(conf)
    md = admin.list_topics(timeout=timeout)
    return {name: len(t.partitions) for name, t in md.topics.items()}


def describe_partitions(conf: dict, topics: list[str] | None = None, timeout: float = 30.0) -> list[dict]:
    """Each partition of ``topics`` (every topic, the internal ones too, when None) as the metadata gives it:
    ``{topic, partition, leader, replicas, isr}`` (node ids; leader -1 while it has none)."""
    from confluent_kafka import KafkaException

    md = _admin(conf).list_topics(timeout=timeout)
    rows = []
    for name in sorted(md.topics if topics is None else topics):
        found = md.topics.get(name)
        if found is None or found.error is not None:
            raise KafkaException(found.error if found is not None else f"no topic {name} in the metadata")
        for p in sorted(found.partitions.values(), key=lambda p: p.id):
            rows.append(
                {
                    "topic": name,
                    "partition": p.id,
                    "leader": p.leader,
                    "replicas": list(p.replicas),
                    "isr": list(p.isrs),
                }
            )
    return rows


def describe_cluster(conf: dict, timeout: float = 30.0) -> dict:
    """``{cluster_id, controller, nodes}``: nodes as ``{id, host, port}``. On KRaft clusters the brokers answer a
    broker of theirs at random as ``controller`` (KIP-919), not the active controller."""
    admin = _admin(conf)  # kept referenced until its future is done
    result = admin.describe_cluster(request_timeout=timeouts.admin_request(timeout)).result(timeout=timeout)
    return {
        "cluster_id": result.cluster_id,
        "controller": result.controller.id if result.controller is not None else None,
        "nodes": sorted(({"id": n.id, "host": n.host, "port": n.port} for n in result.nodes), key=lambda n: n["id"]),
    }


def group_coordinator(conf: dict, group: str, timeout: float = 30.0) -> int:
    """The node id of the broker that coordinates ``group`` (FindCoordinator, as describe_consumer_groups asks), asked
    again while the coordinator moves (``COORDINATOR_MOVING``), for up to ``timeout``."""
    from confluent_kafka import KafkaException

    admin, within = _admin(conf), timeouts.admin_request(timeout)  # the client kept until its future is done

    def ask() -> int:
        return (
            admin.describe_consumer_groups([group], request_timeout=within)[group]
            .result(timeout=timeout)
            .coordinator.id
        )

    def moving(error: Exception) -> bool:
        return isinstance(error, KafkaException) and error.args[0].name() in COORDINATOR_MOVING

    return asked_while_settling(ask, moving, timeout)


def asked_while_settling(
    call: Callable[[], T], settling: Callable[[Exception], bool], seconds: float, sleep=time.sleep, clock=time.monotonic
) -> T:
    """``call()``, asked again every :data:`SETTLE_PAUSE` while it fails with an error ``settling`` says a moving
    leader gives, for up to ``seconds`` from the first such answer; then that error (any other at once)."""
    first = None
    while True:
        try:
            return call()
        except Exception as error:
            now = clock()
            first = now if first is None else first
            if not settling(error) or now - first + SETTLE_PAUSE > seconds:
                raise
            sleep(SETTLE_PAUSE)


def _binding(acl: Acl, *, for_filter: bool = False):
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    cls = AclBindingFilter if for_filter else AclBinding
    resource_type = "BROKER" if acl.resource_type == "CLUSTER" else acl.resource_type  # librdkafka's name for it
    return cls(
        ResourceType[resource_type],
        acl.resource_name,
        ResourcePatternType[acl.pattern_type],
        acl.principal,
        acl.host,
        AclOperation[acl.operation],
        AclPermissionType[acl.permission],
    )


def _distinct(acls: list[Acl | dict]) -> list[Acl]:
    """The ACLs (or ACL file entries) once each: librdkafka refuses a request that names the same binding twice."""
    return list(dict.fromkeys(Acl.of(acl) for acl in acls))


def create_acls(conf: dict, acls: list[Acl | dict], timeout: float = 30.0) -> None:
    if acls:
        admin, within = _admin(conf), timeouts.admin_request(timeout)
        _wait(admin.create_acls([_binding(a) for a in _distinct(acls)], request_timeout=within), timeout)


def delete_acls(conf: dict, acls: list[Acl | dict], timeout: float = 30.0) -> None:
    if acls:
        admin, within = _admin(conf), timeouts.admin_request(timeout)
        _wait(
            admin.delete_acls([_binding(a, for_filter=True) for a in _distinct(acls)], request_timeout=within), timeout
        )


def upsert_scram_user(
    conf: dict, user: str, password_file: str, mechanism: str = "SCRAM-SHA-512", timeout: float = 30.0
) -> None:
    """Create or update a SCRAM credential; the password is read here, from a file, never passed around."""
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    password = Path(password_file).read_bytes().rstrip(b"\n")
    mech = ScramMechanism[mechanism.replace("-", "_")]
    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(mech, 4096), password)
    admin = _admin(conf)
    _wait(admin.alter_user_scram_credentials([upsert], request_timeout=timeouts.admin_request(timeout)), timeout)


def produce(conf: dict, topic: str, records: list[dict], timeout: float = 60.0) -> int:
    """Produce records ({key, value, headers, partition}) and wait for every acknowledgement."""
    from confluent_kafka import KafkaException, Producer

    errors: list[str] = []
    client_errors: list[str] = []
    producer = token_served(
        Producer(
            {
                **conf,
                "acks": "all",
                "enable.idempotence": True,
                "logger": LOG,
                "error_cb": lambda err: client_errors.append(err.str()),
            }
        ),
        conf,
    )

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(str(err))

    for r in records:
        kwargs = {k: r[k] for k in ("key", "value", "headers", "partition", "timestamp") if r.get(k) is not None}
        producer.produce(topic, on_delivery=on_delivery, **kwargs)
        producer.poll(0)
    remaining = producer.flush(timeout)
    if errors or remaining:
        why = (errors or client_errors or ["no error reported"])[0]
        raise KafkaException(f"{len(errors)} records failed, {remaining} unacknowledged: {why}")
    return len(records)


def consume(
    conf: dict, topic: str, *, max_records: int, timeout: float = 30.0, group_id: str = "secure-mirror-check"
) -> list[dict]:
    """Read up to ``max_records`` from the beginning of ``topic``, committing nothing.

    librdkafka still looks up the group's coordinator, so the identity needs READ on ``group_id``."""
    import time

    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = token_served(
        Consumer(
            {**conf, "group.id": group_id, "enable.auto.commit": False, "auto.offset.reset": "earliest", "logger": LOG}
        ),
        conf,
    )
    md = consumer.list_topics(topic, timeout=timeout)
    tmeta = md.topics[topic]
    if tmeta.error is not None:
        raise KafkaException(tmeta.error)
    consumer.assign([TopicPartition(topic, p, 0) for p in tmeta.partitions])
    out: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(out) < max_records and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        out.append(
            {
                "key": msg.key(),
                "value": msg.value(),
                "headers": msg.headers(),
                "timestamp": msg.timestamp()[1],
                "partition": msg.partition(),
                "offset": msg.offset(),
            }
        )
    consumer.close()
    return out


K = TypeVar("K")


def asked_in_flight(keys: Sequence[K], ask: Callable[[K], Any]) -> Iterator[tuple[K, Any]]:
    """Each key with ``ask(key)``'s future, or the exception asking raised, :data:`IN_FLIGHT` keys asked at a time:
    the next ones are asked once the caller has taken (and read) every future of those before."""
    for start in range(0, len(keys), IN_FLIGHT):
        asked: dict = {}
        for key in keys[start : start + IN_FLIGHT]:
            try:
                asked[key] = ask(key)
            except Exception as exc:  # noqa: BLE001 - handed to the caller as that key's answer
                asked[key] = exc
        yield from asked.items()
