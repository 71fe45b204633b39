"""The cluster: the connection and the identity's operations on the cluster, and each broker's login on its own."""

from __future__ import annotations

from typing import TypedDict, final

from secure_mirror.preflight.probes.kafka_admin import Admin, operation_names, reason


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


def describe_cluster(admin: Admin) -> ClusterInfo:
    result = admin.client.describe_cluster(include_authorized_operations=True, request_timeout=admin.request).result()
    return {
        "cluster_id": result.cluster_id,
        "nodes": [(n.id, n.host, n.port) for n in result.nodes],
        "operations": operation_names(result.authorized_operations),
    }  # None: not reported (brokers before Kafka 2.3)
