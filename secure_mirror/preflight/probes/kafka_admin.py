"""The Kafka admin calls pre-flight makes, with confluent-kafka, answered as plain data.

Thin on purpose: every function takes an open client and returns dicts/lists of names, error codes
(``TOPIC_AUTHORIZATION_FAILED``...) and operation names (``READ``...). What they mean is decided in
``preflight.checks``. Calls are batched (one request for all topics) and bounded by ``timeout`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import NotRequired, TypedDict, final

from secure_mirror.kafka import acl_answers, timeouts
from secure_mirror.kafka.acl import Acl
from secure_mirror.kafka.admin_ops import COORDINATOR_MOVING, record_batches
from secure_mirror.kafka.oauth import token_served
from secure_mirror.preflight.probes import Failed

REFUSED_TOPIC = "TOPIC_AUTHORIZATION_FAILED"
EXISTS = "TOPIC_ALREADY_EXISTS"


# ---- the answers ----------------------------------------------------------------------------------------------------
# Operations are Kafka's names (READ, DESCRIBE ...); None where the brokers report none (before Kafka 2.3).
class ClusterInfo(TypedDict):
    cluster_id: str | None
    nodes: list[tuple[int, str, int]]  # (node id, host, port) of each broker, as the metadata names it
    operations: list[str] | None  # the identity's on the cluster


@final
class Reached(TypedDict):
    cluster: ClusterInfo


@final
class Unreached(TypedDict):
    error: str  # why: librdkafka's last client-level error (auth, TLS, transport), else the exception
    librdkafka: list[str]  # its last client-level errors


@final
class BrokerLogin(TypedDict):
    node: int
    server: str  # host:port of its advertised listener
    error: str | None  # None: it answered this identity on its own; else why not (librdkafka's last error)


@final
class Inventory(TypedDict):
    topics: dict[str, int]  # name -> partitions
    acls: list[Acl]  # every ACL of the cluster, as librdkafka hands DescribeAcls' answer over (its error code dropped)
    operations: list[str] | None  # the identity's on the cluster: tells a refused DescribeAcls from no ACL
    authorizer: str | None  # the brokers' authorizer.class.name ("": none); None: DescribeConfigs not answered
    # where ``operations`` is None: whether the brokers report operations (Kafka 2.3+: then None means none granted)
    reports_operations: NotRequired[bool | None]


@final
class Described(TypedDict):
    partitions: int
    operations: list[str] | None


@final
class Refused(TypedDict):
    error: str  # the error code (TOPIC_AUTHORIZATION_FAILED ...)


@final
class GroupOperations(TypedDict):
    operations: list[str] | None


TopicAnswer = Described | Refused
GroupAnswer = GroupOperations | Refused


class Admin:
    """An AdminClient that remembers the client-level errors librdkafka reports (auth, TLS, transport)."""

    def __init__(self, conf: dict, timeout: float):
        from confluent_kafka.admin import AdminClient

        self.errors: list[str] = []
        self.conf, self.timeout = conf, timeout
        self.request = timeouts.admin_request(timeout)  # each admin call's request_timeout
        quiet = {} if "debug" in conf else {"log_level": 0}  # what it logs reaches error_cb, which the checks judge
        self.client = token_served(
            AdminClient({**conf, **quiet, "error_cb": self._on_error, **timeouts.librdkafka(timeout)}), conf
        )

    def _on_error(self, err) -> None:
        self.errors.append(str(err.str() if hasattr(err, "str") else err))


def _code(exc: BaseException) -> str:
    """The KafkaError's code name (``TOPIC_AUTHORIZATION_FAILED``), else the exception's class name."""
    name = getattr(exc.args[0], "name", None) if exc.args else None
    return name() if callable(name) else type(exc).__name__


def _ops(operations) -> list[str] | None:
    return None if operations is None else sorted(op.name for op in operations)


def said(admin: Admin) -> list[str]:
    """librdkafka's client-level errors so far (auth, TLS, transport: each names its broker), the waiting ones served."""
    admin.client.poll(0)
    return list(admin.errors)


def reason(admin: Admin, exc: BaseException) -> str:
    """Why a call failed: librdkafka's last client-level error (auth, TLS, transport), else the exception."""
    return admin.errors[-1] if admin.errors else str(exc)


def connect(admin: Admin) -> Reached | Unreached:
    """The cluster once connected and authenticated, else why not. The client sends DescribeCluster to the broker
    the metadata names controller (on KRaft any broker, drawn anew): when that one does not answer, the metadata a
    broker that did answer gave still describes the cluster, without the identity's operations (``kafka.brokers``
    then names the broker that did not answer)."""
    try:
        return {"cluster": describe_cluster(admin)}
    except Exception as exc:  # noqa: BLE001 - the reason is in librdkafka's error callback
        why = reason(admin, exc)
        try:
            metadata = admin.client.list_topics(timeout=admin.timeout)
        except Exception:  # noqa: BLE001 - no broker answered: the first reason says why
            return {"error": why, "librdkafka": admin.errors[-3:]}
        nodes = sorted((b.id, b.host, b.port) for b in metadata.brokers.values())
        return {"cluster": {"cluster_id": metadata.cluster_id, "nodes": nodes, "operations": None}}


EACH_BROKER_AT_ONCE = 16  # clients asking brokers in parallel: a large cluster is asked in rounds


def each_broker(conf: dict, nodes: list[tuple[int, str, int]], timeout: float) -> list[BrokerLogin]:
    """Each broker the metadata names, asked on its own: a client whose only bootstrap server is that broker's
    advertised listener asks for the cluster's metadata (the topics this identity may describe, no ACL needed for
    the question). It knows no other broker before that one answered, so the answer proves that this broker completed
    TLS (its certificate checked against its host name) and the login (its service principal's ticket, its keytab) as
    the job's clients will meet it when a leader or coordinator moves there. (A DescribeCluster would not do: the
    client sends it to the cluster's controller, whichever broker that is.)"""
    from concurrent.futures import ThreadPoolExecutor

    def ask(node: tuple[int, str, int]) -> BrokerLogin:
        node_id, host, port = node
        admin = Admin({**conf, "bootstrap.servers": f"{host}:{port}"}, timeout)
        try:
            admin.client.list_topics(timeout=timeout)
            error = None
        except Exception as exc:  # noqa: BLE001 - the reason is in librdkafka's error callback
            admin.client.poll(0)  # serves the error events (the login's own error) to error_cb
            said = [e for e in admin.errors if "_ALL_BROKERS_DOWN" not in e]  # "1/1 brokers are down" says no why
            error = said[-1] if said else str(exc)
        return {"node": node_id, "server": f"{host}:{port}", "error": error}

    if not nodes:
        return []
    with ThreadPoolExecutor(min(EACH_BROKER_AT_ONCE, len(nodes))) as pool:
        return list(pool.map(ask, nodes))


def inventory(admin: Admin) -> Inventory | Failed:
    """Every topic and ACL of the cluster as an admin sees them, with its operations on the cluster and the brokers'
    authorizer, or why not. librdkafka drops DescribeAcls' error code: a refusal and a broker without an authorizer
    arrive as no bindings, which the operations and the authorizer tell apart (``kafka.acl_answers``)."""
    try:
        cluster = describe_cluster(admin)
        topics, acls = list_topics(admin), describe_acls(admin)
        node = cluster["nodes"][0][0] if cluster["nodes"] else None
        authorizer = None if node is None else broker_authorizer(admin, node)
        return {"topics": topics, "acls": acls, "operations": cluster["operations"], "authorizer": authorizer}
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return {"error": reason(admin, exc)}


def read_inventory(conf: dict, timeout: float) -> dict:
    """:func:`inventory` as the identity ``conf`` configures, for a call in that identity's own process
    (``KafkaIdentity.call``; a plain dict): {"topics": name -> partitions, "acls": [Acl], "operations", "authorizer"}
    or {"error": why}. What its ACLs tell is ``kafka.acl_answers.unread``'s to judge."""
    admin = Admin(conf, timeout)
    answer = connect(admin)
    return dict(answer) if "error" in answer else dict(inventory(admin))


def read_acls(conf: dict, timeout: float) -> dict:
    """:func:`read_inventory`, with {"error": why} where its ACLs are not the cluster's (``kafka.acl_answers.unread``:
    DescribeAcls refused, no authorizer, or an empty list): for the cut-over, which acts on the ACLs it reads."""
    answer = read_inventory(conf, timeout)
    if "error" in answer:
        return answer
    why = acl_answers.unread(answer["acls"], answer["operations"], answer["authorizer"], "this identity")
    return answer if why is None else {"error": why.finding}


def broker_authorizer(admin: Admin, node: int) -> str | None:
    """Broker ``node``'s ``authorizer.class.name`` ("" when none is configured), or None when DescribeConfigs is not
    answered (it needs DESCRIBE_CONFIGS on the cluster, which a broker without an authorizer grants everyone)."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.BROKER, str(node))
    try:
        asked = admin.client.describe_configs([resource], request_timeout=admin.request)
        entries = next(iter(asked.values())).result()
    except Exception:  # noqa: BLE001 - not answered: the authorizer is not known
        return None
    entry = entries.get("authorizer.class.name")
    return None if entry is None else entry.value or ""


def describe_cluster(admin: Admin) -> ClusterInfo:
    result = admin.client.describe_cluster(include_authorized_operations=True, request_timeout=admin.request).result()
    return {
        "cluster_id": result.cluster_id,
        "nodes": [(n.id, n.host, n.port) for n in result.nodes],
        "operations": _ops(result.authorized_operations),
    }  # None: not reported (brokers before Kafka 2.3)


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
            out[name] = {"partitions": len(desc.partitions), "operations": _ops(desc.authorized_operations)}
        except Exception as exc:  # noqa: BLE001 - per-topic errors are data here
            out[name] = {"error": _code(exc)}
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
            out[name] = _code(exc)
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


def describe_group(admin: Admin, group: str) -> GroupAnswer:
    """The identity's operations on one consumer group (it need not exist), or the error code."""
    deadline = time.monotonic() + admin.timeout
    while True:
        fut = admin.client.describe_consumer_groups(
            [group], include_authorized_operations=True, request_timeout=admin.request
        )[group]
        try:
            return {"operations": _ops(fut.result().authorized_operations)}
        except Exception as exc:  # noqa: BLE001
            code = _code(exc)
            if code not in COORDINATOR_MOVING or time.monotonic() > deadline:
                return {"error": code}
            time.sleep(0.3)


def describe_groups(admin: Admin, groups: list[str]) -> dict[str, GroupAnswer]:
    """``describe_group``'s answer for each of ``groups``, asked together (a group still loading is asked again)."""
    deadline = time.monotonic() + admin.timeout
    answers: dict[str, GroupAnswer] = {}
    waiting = list(dict.fromkeys(groups))
    while waiting:
        futures = admin.client.describe_consumer_groups(
            waiting, include_authorized_operations=True, request_timeout=admin.request
        )
        for group, fut in futures.items():
            try:
                answers[group] = {"operations": _ops(fut.result().authorized_operations)}
            except Exception as exc:  # noqa: BLE001 - per-group errors are data here
                answers[group] = {"error": _code(exc)}
        waiting = [g for g in waiting if answers[g].get("error") in COORDINATOR_MOVING and time.monotonic() < deadline]
        if waiting:
            time.sleep(0.3)
    return {group: answers[group] for group in groups}


def describe_acls(admin: Admin) -> list[Acl]:
    """Every ACL of the cluster (needs DESCRIBE on the cluster); librdkafka's BROKER resource type is CLUSTER."""
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    everything = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    bindings = admin.client.describe_acls(everything, request_timeout=admin.request).result()
    return [Acl.from_binding(b) for b in bindings]


# ---- asking by doing, where brokers before Kafka 2.3 report no authorized operations ------------------------
def _consumer(admin: Admin, group: str, **settings):
    from confluent_kafka import Consumer

    return token_served(
        Consumer(
            {
                **admin.conf,
                "group.id": group,
                "enable.auto.commit": False,
                **timeouts.librdkafka(admin.timeout),
                "error_cb": admin._on_error,
                **settings,
            }
        ),
        admin.conf,
    )


def fetch_probe(admin: Admin, topics: list[str], group: str) -> dict[str, str | None]:
    """topic -> None when a fetch at the end of its first partition was answered (READ proven; no record is kept),
    else the error code (``TOPIC_AUTHORIZATION_FAILED``: no READ; ``NO_ANSWER``)."""
    from confluent_kafka import OFFSET_END, KafkaError, TopicPartition

    consumer = _consumer(admin, group, **{"enable.partition.eof": True})
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
            out[resource.name] = _code(exc)
    return {t: out.get(t, "NO_ANSWER") for t in topics}


def join_probe(admin: Admin, group: str, topic: str) -> str | None:
    """None when ``group`` could be joined and given partitions of ``topic`` (JoinGroup and SyncGroup need READ on
    the group, as Spark's driver does), else ``GROUP_AUTHORIZATION_FAILED`` or ``NO_ANSWER``. The group is left."""
    from confluent_kafka import KafkaError

    consumer = _consumer(admin, group, **{"session.timeout.ms": "10000", "auto.offset.reset": "latest"})
    assigned: list[bool] = []
    code = "NO_ANSWER"
    try:
        consumer.subscribe([topic], on_assign=lambda _consumer, partitions: assigned.append(True))
        deadline = time.monotonic() + admin.timeout * 3
        while not assigned and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if (
                message is not None
                and message.error() is not None
                and message.error().code() == KafkaError.GROUP_AUTHORIZATION_FAILED
            ):
                code = "GROUP_AUTHORIZATION_FAILED"
                break
    finally:
        consumer.close()
    return None if assigned else code


def transaction_probe(admin: Admin, transactional_id: str) -> str | None:
    """None when a transactional producer could register ``transactional_id`` (InitProducerId: WRITE on the id; no
    record is written, and the brokers forget an unused id after ``transactional.id.expiration.ms``), else the error
    code (``TRANSACTIONAL_ID_AUTHORIZATION_FAILED``; ``_TIMED_OUT`` and others: no answer)."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer(
        {
            **admin.conf,
            "transactional.id": transactional_id,
            **timeouts.transactional(admin.timeout, admin.conf),
            "error_cb": admin._on_error,
            "log_level": 0,
        }
    )  # "coordinator loading: retrying" is no news
    try:
        producer.init_transactions(admin.timeout * 2)
    except KafkaException as exc:
        return _code(exc)
    return None
