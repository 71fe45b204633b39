"""The brokers of a running sandbox, for the fault cases: one broker stopped cleanly, killed or started again by its
node id, and what each cluster says of itself (partition leaders and in-sync replicas, the active KRaft controller,
the coordinator of a group or of a transactional id), asked as the side's admin identity. Plain data out: the tests
decide what it means."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.processes import ProcessError
from secure_mirror.sandbox import kafka_tools, procs
from secure_mirror.sandbox.kafka import Broker
from secure_mirror.sandbox.nodes import Side

# Seconds a broker has to serve again, and a cluster to have every replica in sync: a JVM's start on two CPUs that
# other test sessions keep busy took over 120 s (load average 95).
BROKER_TIMEOUT = 300.0


class BrokerControl:
    """Mixed into :class:`~secure_mirror.sandbox.bed.Sandbox`, which provides what is declared here."""

    base: Path
    state: dict
    sides: dict[str, Side]
    broker: Callable[..., Broker]
    brokers: Callable[[str], list[Broker]]
    pid_key: Callable[..., str]
    admin: Callable[..., Any]
    _save: Callable[[], None]

    # ---- one broker ------------------------------------------------------------------------------------
    def start_broker(self, side: str, timeout: float = BROKER_TIMEOUT, *, node_id: int = 1) -> None:
        """Start a broker again after it stopped (its data is kept) and record its new pid."""
        broker = self.broker(side, node_id)
        try:
            broker.start(timeout)
        finally:  # a broker that started but was not ready in time runs all the same: it must stay stoppable
            if broker.pid:
                self.state["pids"][self.pid_key(side, node_id)] = broker.pid
                self._save()

    def stop_broker(self, side: str, node_id: int = 1, *, hard: bool = False) -> None:
        """Stop a broker: a clean shutdown (SIGTERM: it hands its leaderships over first), or with ``hard`` a kill -9."""
        self.broker(side, node_id).stop(hard=hard)

    def kill_broker(self, side: str, node_id: int = 1) -> None:
        """kill -9 of one broker (the same as ``stop_broker(side, node_id, hard=True)``)."""
        self.stop_broker(side, node_id, hard=True)

    def restart_broker(
        self,
        side: str,
        *,
        hard: bool = False,
        down_seconds: float = 0.0,
        timeout: float = BROKER_TIMEOUT,
        node_id: int = 1,
    ) -> None:
        """Stop a broker (SIGTERM, or SIGKILL when ``hard``), leave it down ``down_seconds``, then start it again
        on the same ports with the same data and wait until it serves; ``state["pids"]`` follows."""
        self.stop_broker(side, node_id, hard=hard)
        time.sleep(down_seconds)
        self.start_broker(side, timeout, node_id=node_id)

    # ---- what a cluster says -----------------------------------------------------------------------------
    def partitions(self, side: str, topics: list[str] | None = None) -> list[dict]:
        """Each partition of ``topics`` (all, internal ones too, when None): ``{topic, partition, leader, replicas,
        isr}`` as node ids (leader -1 while it has none)."""
        return self.admin(side, admin_ops.describe_partitions, topics)

    def under_replicated(self, side: str, topics: list[str] | None = None) -> list[dict]:
        """The partitions whose in-sync replicas are fewer than their replicas, or that have no leader."""
        return [p for p in self.partitions(side, topics) if p["leader"] < 0 or len(p["isr"]) < len(p["replicas"])]

    def wait_in_sync(self, side: str, timeout: float = BROKER_TIMEOUT, topics: list[str] | None = None) -> float:
        """Wait until ``side`` has no under-replicated partition (every replica back in sync, every partition led);
        the seconds it took. A sentence naming the partitions still behind when ``timeout`` passes."""
        started = time.monotonic()
        behind: list[dict] = []
        while time.monotonic() - started < timeout:
            try:
                behind = self.under_replicated(side, topics)
            except ProcessError as error:  # asked while the cluster moves: asked again
                behind = [{"topic": f"(not answered: {str(error)[:200]})", "partition": -1}]
            if not behind:
                return time.monotonic() - started
            time.sleep(1.0)
        names = ", ".join(f"{p['topic']}-{p['partition']}" for p in behind[:10])
        raise EnvironmentNotReady(
            f"the {side} cluster still has {len(behind)} under-replicated partitions after {timeout:.0f}s: {names}"
        )

    def partition_leader(self, side: str, topic: str, partition: int) -> int:
        """The node id that leads ``topic``'s ``partition`` (-1 while none does)."""
        rows = self.partitions(side, [topic])
        return next(p["leader"] for p in rows if p["partition"] == partition)

    def cluster_nodes(self, side: str) -> dict:
        """``{cluster_id, controller, nodes}`` as the brokers describe the cluster (``controller`` is a broker at
        random on KRaft: :meth:`active_controller` names the active one)."""
        return self.admin(side, admin_ops.describe_cluster)

    def metadata_quorum(self, side: str) -> dict:
        """The KRaft quorum (Admin.describeMetadataQuorum, through Kafka's tool): ``{cluster_id, leader_id,
        leader_epoch, high_watermark, voters, observers}``."""
        return kafka_tools.parse_quorum_status(
            kafka_tools.run_tool(self, side, kafka_tools.QUORUM, "describe", "--status")
        )

    def active_controller(self, side: str) -> int:
        """The node id of the active KRaft controller, the quorum's leader."""
        return self.metadata_quorum(side)["leader_id"]

    def group_coordinator(self, side: str, group: str) -> int:
        """The node id of the broker coordinating consumer group ``group``."""
        return self.admin(side, admin_ops.group_coordinator, group)

    def transactions(self, side: str) -> list[dict]:
        """Every transactional id the cluster knows: ``{transactional_id, coordinator, producer_id, state}``."""
        return kafka_tools.parse_transactions(kafka_tools.run_tool(self, side, kafka_tools.TRANSACTIONS, "list"))

    def transaction_coordinator(self, side: str, transactional_id: str) -> int | None:
        """The node id coordinating ``transactional_id``, or None while the cluster does not know it."""
        found = [t["coordinator"] for t in self.transactions(side) if t["transactional_id"] == transactional_id]
        return found[0] if found else None

    # ---- what an operator changes --------------------------------------------------------------------------
    def reorder_replicas(self, side: str, replicas: dict[tuple[str, int], list[int]], timeout: float = 120.0) -> None:
        """Give each ``(topic, partition)`` its replicas in a new order through Kafka's ReassignPartitionsCommand
        (the same brokers, so nothing is copied; the first becomes the preferred leader), and wait until the cluster
        describes them in that order; ``timeout`` for the tool and for the wait each."""
        path = self.base / side / "reassignment.json"
        path.write_text(kafka_tools.reassignment_json(replicas))
        kafka_tools.run_tool(
            self, side, kafka_tools.REASSIGN, "--reassignment-json-file", str(path), "--execute", timeout=timeout
        )
        topics = sorted({topic for topic, _ in replicas})

        def taken() -> bool:
            described = {(p["topic"], p["partition"]): p["replicas"] for p in self.partitions(side, topics)}
            return all(described.get(tp) == list(order) for tp, order in replicas.items())

        procs.wait_until(taken, what=f"the new replica order on the {side} cluster", timeout=timeout)
