"""Kafka's own command-line tools (from .deps/kafka/lib) run as a side's admin identity, for what confluent-kafka
cannot ask: the KRaft metadata quorum (``MetadataQuorumCommand``), the transactional ids with their coordinators
(``TransactionsCommand``) and partition reassignments (``ReassignPartitionsCommand``). The parsers and the
reassignment file are pure functions."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.profile.cluster import Cluster
from secure_mirror.render.java_properties import client_properties, properties_text
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.profile import cluster_dict

QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"
TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"
REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
TOOL_TIMEOUT = 120.0


def admin_properties(sb, side: str) -> Path:
    """``<side>/admin-client.properties`` (0600): the admin identity's connection as Kafka's tools read it (its
    keytab by path, rendered as render renders any profile side)."""
    path = sb.base / side / "admin-client.properties"
    cluster = Cluster.model_validate(cluster_dict(sb, side, f"sandbox-{side}", "GSSAPI", "admin"))
    text = properties_text(client_properties(cluster, side), ["The sandbox's admin identity, for Kafka's tools."])
    path.touch(mode=0o600)
    path.write_text(text)
    return path


def run_tool(sb, side: str, main: str, *args: str, timeout: float = TOOL_TIMEOUT) -> str:
    """Run Kafka's tool ``main`` against ``side`` as its admin; its standard output, or a sentence with its error."""
    argv = [
        paths.java_executable(),
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        f"-Djava.security.krb5.conf={sb.krb5_conf}",
        "-cp",
        paths.kafka_classpath(),
        main,
        "--bootstrap-server",
        sb.sides[side].bootstrap,
        "--command-config",
        str(admin_properties(sb, side)),
        *args,
    ]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=procs.inherited_env("JAVA_HOME"),
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentNotReady(
            f"{main.rsplit('.', 1)[1]} on the {side} cluster gave no answer in {timeout:.0f}s"
        ) from None
    if done.returncode != 0:
        raise EnvironmentNotReady(
            f"{main.rsplit('.', 1)[1]} on the {side} cluster failed: {(done.stderr or done.stdout).strip()[-1500:]}"
        )
    return done.stdout


def parse_quorum_status(text: str) -> dict:
    """``describe --status`` as ``{cluster_id, leader_id, leader_epoch, high_watermark, voters, observers}``
    (voters and observers as node ids)."""
    fields = dict(
        (key.strip(), value.strip()) for key, _, value in (line.partition(":") for line in text.splitlines()) if value
    )
    if "LeaderId" not in fields:
        raise EnvironmentNotReady(f"the metadata quorum's description names no leader: {text.strip()[:500]}")
    return {
        "cluster_id": fields.get("ClusterId"),
        "leader_id": int(fields["LeaderId"]),
        "leader_epoch": int(fields.get("LeaderEpoch", "-1")),
        "high_watermark": int(fields.get("HighWatermark", "-1")),
        "voters": _node_ids(fields.get("CurrentVoters", "[]")),
        "observers": _node_ids(fields.get("CurrentObservers", "[]")),
    }


def _node_ids(value: str) -> list[int]:
    """The ids of ``[{"id": 1, ...}, ...]`` (Kafka 3.9+) or ``[1,2,3]`` (before)."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return sorted(int(found) for found in re.findall(r'"id":\s*(\d+)', value))
    return sorted(int(item["id"]) if isinstance(item, dict) else int(item) for item in parsed)


def parse_transactions(text: str) -> list[dict]:
    """``TransactionsCommand list`` as ``{transactional_id, coordinator, producer_id, state}`` rows."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    if not lines or lines[0][:2] != ["TransactionalId", "Coordinator"]:
        raise EnvironmentNotReady(f"the transactions list has no header Kafka's tool writes: {text.strip()[:500]}")
    return [
        {"transactional_id": row[0], "coordinator": int(row[1]), "producer_id": int(row[2]), "state": row[3]}
        for row in lines[1:]
        if len(row) >= 4
    ]


def reassignment_json(replicas: dict[tuple[str, int], list[int]]) -> str:
    """The reassignment file ``ReassignPartitionsCommand --execute`` reads: each ``(topic, partition)`` with its
    replicas in order (the first is the partition's preferred leader)."""
    rows = [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in sorted(replicas.items())]
    return json.dumps({"version": 1, "partitions": rows})
