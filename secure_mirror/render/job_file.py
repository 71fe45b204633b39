"""``spark/job.json``: what the mirror job needs besides the Kafka options, as data (no secrets in it).

The rename rule as pieces for a Spark expression, the partition policy, provenance headers, the checkpoint, the
trigger (micro-batch or continuous) and the profile's fingerprint, and each side's Kerberos identity (principal and
keytab as the job sees them: the shipped name when files travel with the job), so the job's login watch never reads
a JAAS string back. The file's shape is ``render/job_model.py``'s, which the job reads it with.
"""

from __future__ import annotations

from secure_mirror.profile.cluster import SIDES
from secure_mirror.profile.job_settings import profile_fingerprint
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl
from secure_mirror.render.job_model import JobIdentity, JobSettings, JobTopicShape
from secure_mirror.render.spark import shipped_keytab, ships_keytab, source_format


def identities(profile: Profile) -> tuple[JobIdentity, ...]:
    """Each side's GSSAPI identity."""
    found = []
    for side in SIDES:
        cluster = profile.cluster(side)
        if isinstance(cluster.sasl, GssapiSasl):
            shipped = shipped_keytab(cluster, side) if ships_keytab(profile, cluster) else None
            found.append(JobIdentity(side, cluster.sasl.principal, shipped or str(cluster.sasl.keytab)))
    return tuple(found)


def job_settings(profile: Profile) -> JobSettings:
    """The content of ``spark/job.json``."""
    mirror, shape = profile.mirror, profile.mirror.topic_shape
    return JobSettings(
        target_topic_pieces=tuple(profile.target_topic_pieces),
        keep_partition=mirror.keep_partition,
        provenance_headers=mirror.provenance_headers,
        source_alias=profile.source.alias,
        target_alias=profile.target.alias,
        checkpoint_location=mirror.checkpoint_location,
        trigger=mirror.spark.trigger,
        source_format=source_format(profile),
        continuous_interval_ms=mirror.spark.continuous_interval_ms,
        check_cluster_security=mirror.spark.checks_cluster_security,
        fingerprint=profile_fingerprint(profile),
        identities=identities(profile),
        topic_shape=JobTopicShape(
            sync_configs=shape.sync_configs,
            exclude_configs=tuple(shape.exclude_configs),
            grow_partitions=shape.grow_partitions,
            interval_seconds=shape.interval_seconds,
        ),
        ride_through_seconds=mirror.ride_through_seconds,
    )


def job_json(profile: Profile) -> str:
    return job_settings(profile).to_json()
