"""The two clusters' Kafka cluster ids, for the sink's provenance headers and loop filter (docs/provenance.md).

The job's driver asks each side once, with the planner's admin clients (``describeCluster``, which any
authenticated client may ask), and hands both ids to the sink as options: the source's goes into each record's
``secure-mirror.cluster-id`` header, the target's is what the sink never writes back (jvm/sink Provenance.java).
"""

from __future__ import annotations

SOURCE_CLUSTER_ID = "mirror.provenance-cluster-id"  # jvm/sink Provenance.SOURCE_CLUSTER_ID
TARGET_CLUSTER_ID = "mirror.target-cluster-id"  # jvm/sink Provenance.TARGET_CLUSTER_ID


def cluster_id_options(source_id: str | None, target_id: str | None) -> dict[str, str]:
    """The sink's options for the ids found (an unknown id is left out: no header, no filter on it)."""
    found = {SOURCE_CLUSTER_ID: source_id, TARGET_CLUSTER_ID: target_id}
    return {name: value for name, value in found.items() if value}


def cluster_ids(planner) -> dict[str, str]:
    """The sink's cluster id options, asked with the planner's source and target admin clients (Java)."""

    def asked(admin) -> str | None:
        found = admin.describeCluster().clusterId().get()
        return str(found) if found is not None else None

    return cluster_id_options(asked(planner.source), asked(planner.target))
