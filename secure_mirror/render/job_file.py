"""``spark/job.json``: what the mirror job needs besides the Kafka options, as data (no secrets in it).

The rename rule as pieces for a Spark expression, the partition policy, provenance headers, the checkpoint, the
trigger (micro-batch or continuous) and the profile's fingerprint, and each side's Kerberos identity (principal and
keytab as the job sees them: the shipped name when files travel with the job), so the job's login watch never reads
a JAAS string back.
"""

from __future__ import annotations

import json

from secure_mirror.profile.job_settings import profile_fingerprint
from secure_mirror.profile.models import SIDES, GssapiSasl, Profile
from secure_mirror.render.spark import shipped_keytab, ships_keytab, source_format


def identities(profile: Profile) -> list[dict[str, str]]:
    """Each side's GSSAPI identity: ``{"side", "principal", "keytab"}``."""
    found = []
    for side in SIDES:
        cluster = profile.cluster(side)
        if isinstance(cluster.sasl, GssapiSasl):
            shipped = shipped_keytab(cluster, side) if ships_keytab(profile, cluster) else None
            keytab = shipped or str(cluster.sasl.keytab)
            found.append({"side": side, "principal": cluster.sasl.principal, "keytab": keytab})
    return found


def job_settings(profile: Profile) -> dict:
    """The content of ``spark/job.json``."""
    return {
        "target_topic_pieces": profile.target_topic_pieces,
        "keep_partition": profile.mirror.keep_partition,
        "provenance_headers": profile.mirror.provenance_headers,
        "source_alias": profile.source.alias,
        "checkpoint_location": profile.mirror.checkpoint_location,
        "trigger": profile.mirror.spark.trigger,
        "source_format": source_format(profile),
        "continuous_interval_ms": profile.mirror.spark.continuous_interval_ms,
        "check_cluster_security": profile.mirror.spark.checks_cluster_security,
        "fingerprint": profile_fingerprint(profile),
        "identities": identities(profile),
        "topic_shape": profile.mirror.topic_shape.model_dump(),
    }


def job_json(profile: Profile) -> str:
    return json.dumps(job_settings(profile), indent=2) + "\n"
