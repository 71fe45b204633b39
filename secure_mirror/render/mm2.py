"""mm2.properties: the same mirror for MirrorMaker 2 (dedicated mode, ``connect-mirror-maker.sh``), with the
same credentials, topics and renaming as the Spark job."""

from __future__ import annotations

from secure_mirror.profile.delivery import SMALLEST_BATCH
from secure_mirror.profile.groups import ALWAYS_EXCLUDED_GROUPS
from secure_mirror.profile.models import Profile
from secure_mirror.profile.topics import ALWAYS_EXCLUDED
from secure_mirror.render.encoders import sh
from secure_mirror.render.java_properties import java_connection, properties_text
from secure_mirror.render.providers import (
    VALUES,
    Secrets,
    automatic_option,
    declarations,
    hadoop_classpath_note,
    provider_classes,
)

IDENTITY_POLICY = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
DEFAULT_POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
# MirrorMaker 2's replication consumer fetches up to 16 MiB of a partition a request (the job's own largest share),
# not Kafka's 1 MiB. A broker cuts a partition's share at that many bytes, mid record batch, and the consumer drops
# the cut batch and fetches it again: against record batches of about 590 KB (lz4 of 1 MB), 41% of the bytes
# MirrorMaker 2 moved across a link were fetched twice (benchmarks/NOTES.md section 24). A response stays within
# fetch.max.bytes (50 MiB), so no more is held at once. The profile's source.client_options wins.
MM2_SOURCE_CONSUMER_DEFAULTS = {"max.partition.fetch.bytes": str(16 * 1024 * 1024)}
# MirrorMaker 2's own default exclusions (its internal and replica topics), kept next to ours.
REPLICATION_FACTOR_KEYS = (
    "replication.factor",
    "checkpoints.topic.replication.factor",
    "heartbeats.topic.replication.factor",
    "offset-syncs.topic.replication.factor",
    "offset.storage.replication.factor",
    "status.storage.replication.factor",
    "config.storage.replication.factor",
)


def replication_policy(profile: Profile) -> tuple[dict[str, str], str | None]:
    """(settings, None) when MirrorMaker 2 can name topics as the profile does, else ({}, why not)."""
    template = profile.mirror.rename.template_text
    if template == "{topic}":
        return {"replication.policy.class": IDENTITY_POLICY}, None
    if (separator := profile.mirror.rename.mm2_separator) is not None:
        return {"replication.policy.class": DEFAULT_POLICY, "replication.policy.separator": separator}, None
    return {}, (
        f"the rename template {template!r} has no MirrorMaker 2 replication policy "
        f"(only {{topic}} and {{source_alias}}<separator>{{topic}} do); this flow is disabled"
    )


def group_settings(profile: Profile, flow: str) -> dict[str, str]:
    """With ``mirror.groups``, MirrorMaker 2's checkpoints and group offset sync over the same groups at the same
    interval: its ``groups``/``groups.exclude`` (the mirror's own groups excluded too, as the sync excludes them),
    and the emit, sync and group refresh intervals at ``sync_interval_seconds`` (its defaults are 60, 60 and 600 s).
    Without it, MirrorMaker 2's defaults (which sync no group offset)."""
    groups = profile.mirror.groups
    if not groups.enabled:
        return {}
    interval = str(groups.sync_interval_seconds)
    selection = groups.selection()
    return {
        f"{flow}.groups": ",".join(selection.include),
        f"{flow}.groups.exclude": ",".join([*ALWAYS_EXCLUDED_GROUPS, *selection.exclude]),
        f"{flow}.emit.checkpoints.enabled": "true",
        f"{flow}.emit.checkpoints.interval.seconds": interval,
        f"{flow}.sync.group.offsets.enabled": "true",
        f"{flow}.sync.group.offsets.interval.seconds": interval,
        f"{flow}.refresh.groups.interval.seconds": interval,
    }


def mm2_settings(profile: Profile, secrets: Secrets = VALUES) -> tuple[dict[str, str], list[str]]:
    """The mm2.properties settings and the notes to print above them. With references, ``config.providers`` is
    declared once at the top: MirrorMakerConfig resolves every cluster's settings with those (not per alias)."""
    source, target = profile.source, profile.target
    flow, back = f"{source.alias}->{target.alias}", f"{target.alias}->{source.alias}"
    policy, problem = replication_policy(profile)
    selection = profile.selection()
    settings = {"clusters": f"{source.alias}, {target.alias}"}
    if secrets.references:
        settings.update(declarations(profile.clusters().items()))
    for side, cluster in profile.clusters().items():
        connection = {**java_connection(cluster, side, secrets=secrets), **cluster.client_options}
        settings.update({f"{cluster.alias}.{key}": str(value) for key, value in connection.items()})
    settings.update(
        {
            f"{flow}.enabled": "false" if problem else "true",
            f"{flow}.topics": ",".join(selection.include),
            f"{flow}.topics.exclude": ",".join([*ALWAYS_EXCLUDED, *selection.exclude]),
            f"{back}.enabled": "false",
            f"{back}.emit.heartbeats.enabled": "false",
            "sync.topic.acls.enabled": "false",
            f"{target.alias}.producer.acks": profile.mirror.delivery.acks,
            f"{target.alias}.producer.enable.idempotence": str(profile.mirror.delivery.enable_idempotence).lower(),
            f"{target.alias}.producer.compression.type": profile.mirror.delivery.compression,
            f"{target.alias}.producer.linger.ms": str(profile.mirror.delivery.linger_ms),
            f"{target.alias}.producer.batch.size": str(profile.mirror.delivery.batch_size or SMALLEST_BATCH),
            # <alias>.consumer.* of the source becomes the flow's source.consumer.*, which MirrorSourceTask's
            # replication consumer applies (MirrorConnectorConfig.sourceConsumerConfig)
            **{
                f"{source.alias}.consumer.{key}": value
                for key, value in {
                    **profile.mirror.source_consumer_settings,
                    **profile.source_java_consumer_defaults,
                    **{k: v for k, v in MM2_SOURCE_CONSUMER_DEFAULTS.items() if k not in source.client_options},
                }.items()
            },
            **policy,
            **group_settings(profile, flow),
        }
    )
    factor = str(profile.mirror.mm2.replication_factor)
    settings.update({key: factor for key in REPLICATION_FACTOR_KEYS})
    settings.update(
        {
            key: str(value).lower() if isinstance(value, bool) else str(value)
            for key, value in profile.mirror.mm2.properties.items()
        }
    )
    return settings, [problem] if problem else []


def mm2_properties(profile: Profile, path: str, krb5_conf: str | None = None, secrets: Secrets = VALUES) -> str:
    settings, notes = mm2_settings(profile, secrets)
    kerberos = [f"Kerberos: export KAFKA_OPTS={sh('-Djava.security.krb5.conf=' + krb5_conf)}"] if krb5_conf else []
    if secrets.references and (classes := provider_classes(profile.clusters().items())):  # Kafka 3.8+'s allow-list
        option = automatic_option(classes)
        kerberos.append(f"Secrets are references Kafka resolves: add {sh(option)} to KAFKA_OPTS")
        kerberos += hadoop_classpath_note(profile.clusters().items())
    header = [
        f"MirrorMaker 2 configuration rendered by secure-mirror: {profile.source.alias} -> {profile.target.alias}.",
        f"Run it with: connect-mirror-maker.sh {path}",
        *kerberos,
        "ACLs are managed by the security team (see ../acls/), so sync.topic.acls.enabled is false.",
        "replication factor -1 means the broker's default (mirror.mm2.replication_factor in the profile).",
        *(f"NOTE: {note}" for note in notes),
    ]
    return properties_text(settings, header)
