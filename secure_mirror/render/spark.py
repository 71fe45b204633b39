"""Spark: the Kafka source and sink options (``kafka.``-prefixed, one ``sasl.jaas.config`` per side so two
identities live in one JVM), the Spark configuration, and the spark-submit command that runs the mirror job.

With a local master every path is local. Otherwise the keytabs and krb5.conf travel with ``--files`` under
distinct names (``source-mirror.keytab``, ``target-mirror.keytab``, ``krb5.conf``) and the options refer to those
names, which YARN, Kubernetes and standalone workers place in each executor's working directory. The names come
from private copies that spark-submit.sh makes in the rendered ``spark/`` folder, not from ``--files local#name``
(only YARN honours that renaming; elsewhere Spark 4 refuses the ``#``: "URI has a fragment component") nor from
symbolic links (Spark ships a link under its target's name, and both keytabs may be called ``mirror.keytab``).
"""

from __future__ import annotations

import re
from pathlib import Path

import secure_mirror
from secure_mirror import paths
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.delivery import KAFKA_BUFFER_MEMORY, batch_size_for
from secure_mirror.profile.job_settings import OPTION_FILES, PROVENANCE_PREFIX
from secure_mirror.profile.models import Profile
from secure_mirror.profile.principals import parse_principal
from secure_mirror.profile.runtime import SPARK_INTERNAL_SECURITY
from secure_mirror.profile.security import GssapiSasl, OAuthSasl
from secure_mirror.profile.topics import offset_map_topic
from secure_mirror.render import templating
from secure_mirror.render.encoders import json_inline, jvm_option, option_text
from secure_mirror.render.hadoop_conf import FOLDER as HADOOP_FOLDER
from secure_mirror.render.java_properties import java_connection
from secure_mirror.render.krb5 import krb5_conf_path
from secure_mirror.render.providers import VALUES, Secrets, automatic_option, declarations, provider_classes
from secure_mirror.render.spark_jars import jar_conf

SHIPPED_KRB5 = "krb5.conf"
SINK_BATCH_SIZE = "kafka.batch.size"  # the profile's mirror.delivery.batch_size, or set by the job (with_batch_size)


def shipped_keytab(cluster: Cluster, side: str) -> str | None:
    """The distinct name a side's keytab travels under (``source-mirror.keytab``), or None without GSSAPI."""
    if not isinstance(cluster.sasl, GssapiSasl):
        return None
    return f"{side}-{parse_principal(cluster.sasl.principal).primary}.keytab"


def ships_files(profile: Profile) -> bool:
    """True when executors run elsewhere (YARN, Kubernetes, standalone), so files must travel with the job."""
    return not profile.mirror.spark.is_local


def ships_keytab(profile: Profile, cluster: Cluster) -> bool:
    """True when a side's keytab travels with the job: executors elsewhere log in with it (``executor_auth:
    keytab``). With delegation tokens it stays where the driver runs, and the options name it there."""
    return ships_files(profile) and not cluster.uses_delegation_token


def _kafka_options(profile: Profile, cluster: Cluster, side: str, secrets: Secrets) -> dict[str, str]:
    keytab = shipped_keytab(cluster, side) if ships_keytab(profile, cluster) else None
    settings = {**java_connection(cluster, side, keytab, secrets), **cluster.client_options}
    if secrets.references:  # every client of the job gets them (the mirror's admin clients keep config.providers*)
        settings.update(declarations([(side, cluster)]))
    return {f"kafka.{key}": option_text(value) for key, value in settings.items()}


CONTINUOUS_FETCH_WAIT_MS = "10"  # continuous trigger, unless source.client_options sets fetch.max.wait.ms


def source_options(profile: Profile, secrets: Secrets = VALUES) -> dict[str, str]:
    """Options for ``spark.readStream.format(source_format(profile))``: Spark's Kafka source's names, which the
    mirror's own source reads alike, plus its own ``mirror.`` ones."""
    options = _kafka_options(profile, profile.source, "source", secrets)
    options.update(
        {
            "subscribePattern": profile.selection().java_pattern(),
            "startingOffsets": profile.mirror.starting_offsets,
            "failOnDataLoss": "true",
            "includeHeaders": "true",
            "groupIdPrefix": profile.group_prefix,
        }
    )
    # isolation.level in every guarantee and trigger (Spark's offsets and reads both follow it; client_options may
    # not set it): read_committed by default, so records of aborted source transactions are never mirrored
    options.update({f"kafka.{key}": value for key, value in profile.mirror.source_consumer_settings.items()})
    options.update({f"kafka.{key}": value for key, value in profile.source_java_consumer_defaults.items()})
    if profile.mirror.continuous:  # docs/continuous.md: the consumer's default 500 ms fetch wait was the latency floor
        options.setdefault("kafka.fetch.max.wait.ms", CONTINUOUS_FETCH_WAIT_MS)
    if profile.mirror.spark.max_offsets_per_trigger:
        options["maxOffsetsPerTrigger"] = str(profile.mirror.spark.max_offsets_per_trigger)
    if source_format(profile) == SOURCE_FORMAT:  # the mirror's own source (jvm/sink SourceSettings) reads these too
        # how long the driver asks the source again through a bad minute (jvm/sink securemirror.ride.Waits)
        options["mirror.ride-through-ms"] = str(profile.mirror.ride_through_seconds * 1000)
        if profile.mirror.spark.tasks:
            options["mirror.tasks"] = str(profile.mirror.spark.tasks)
        if profile.source.uses_delegation_token:  # executors' consumers log in with Spark's token for "source"
            options.update({"mirror.token-cluster": "source", "mirror.token-mechanism": TOKEN_MECHANISM})
    return options


SOURCE_FORMAT = "securemirror.source.MirrorSource"  # jvm/sink: the mirror's own source


def source_format(profile: Profile) -> str:
    """The Spark source the job reads with, under either trigger: the mirror's own unless the profile asks for
    Spark's Kafka source (``mirror.spark.source: kafka``)."""
    return SOURCE_FORMAT if profile.mirror.spark.source == "mirror" else "kafka"


TOKEN_MECHANISM = "SCRAM-SHA-512"  # how executors log in with a delegation token (the brokers enable it)
SINK_FORMAT = "securemirror.sink.MirrorSink"  # jvm/sink: the mirror's own Spark sink (its jar is a connector jar)
SINK_KEPT_TOPICS = "mirror.keep-partition-topics"  # per batch, set by the job: the source topics keeping partitions
SINK_REPORT_KEY = "mirror.report-key"  # per batch, set by the job: where the sink leaves the batch's figures
SINK_OFFSET_MAP = "mirror.offset-map-topic"  # where the sink records its offset map (docs/offset-map.md)


def with_batch_size(options: dict[str, str], partitions: int | None) -> dict[str, str]:
    """The sink's options with the producer's batch.size: the profile's when it sets one, else
    :func:`~secure_mirror.profile.delivery.batch_size_for` the partitions the job writes and the producer's pool
    (``kafka.buffer.memory``; Kafka's default when unset or not a whole number)."""
    if SINK_BATCH_SIZE in options:
        return options
    try:
        pool = int(options.get("kafka.buffer.memory", KAFKA_BUFFER_MEMORY))
    except ValueError:
        pool = KAFKA_BUFFER_MEMORY
    return {**options, SINK_BATCH_SIZE: str(batch_size_for(partitions, pool))}


def sink_options(profile: Profile, secrets: Secrets = VALUES) -> dict[str, str]:
    """Options for the mirror's sink (``SINK_FORMAT``): the target producer's settings and identity (``kafka.``),
    the rename rule, provenance headers, the delivery guarantee and, when groups follow the mirror, the offset map's
    topic (``mirror.``, see jvm/sink SinkSettings)."""
    delivery = profile.mirror.delivery
    options = _kafka_options(profile, profile.target, "target", secrets)
    options.update(
        {
            "kafka.acks": delivery.acks,
            "kafka.enable.idempotence": option_text(delivery.enable_idempotence),
            "kafka.compression.type": delivery.compression,
            "kafka.delivery.timeout.ms": str(delivery.delivery_timeout_ms),
            "kafka.linger.ms": str(delivery.linger_ms),
            "mirror.target-topic-pieces": json_inline(profile.target_topic_pieces),
            "mirror.guarantee": delivery.guarantee,
            "checkpointLocation": profile.mirror.checkpoint_location,
        }
    )
    if delivery.batch_size is not None:
        options[SINK_BATCH_SIZE] = str(delivery.batch_size)
    if delivery.exactly_once:
        options["mirror.transactional-prefix"] = profile.transactional_prefix
        options["mirror.job-key"] = profile.job_key
        if source_format(profile) == SOURCE_FORMAT:  # its task i reads the same partitions in every batch
            options["mirror.producer-per"] = "task"
    if profile.target.uses_delegation_token:  # the sink logs in with Spark's token for "target"
        options.update({"mirror.token-cluster": "target", "mirror.token-mechanism": TOKEN_MECHANISM})
    if profile.mirror.provenance_headers:
        options.update({"mirror.provenance-alias": profile.source.alias, "mirror.provenance-prefix": PROVENANCE_PREFIX})
    if profile.mirror.groups.enabled:  # groups follow the mirror: the sink records where each record went
        options[SINK_OFFSET_MAP] = offset_map_topic(profile.source.alias)
    options.update(heartbeat_options(profile))  # for the job's driver (docs/heartbeats.md); the sink ignores them
    return options


def _java_options(
    krb5: str | None,
    oauth_urls: list[str],
    user_value: object | None,
    jaas_file: str | None = None,
    providers: str | None = None,
) -> str:
    """Our options, each one quoted word as Spark splits the string, then the profile's own (a string of options
    the user wrote for Spark to split). ``providers``: Kafka's allow-list of config providers, when references."""
    parts = [jvm_option(f"-Djava.security.krb5.conf={krb5}", "krb5.conf path")] if krb5 else []
    if providers is not None:
        parts.append(jvm_option(providers, "config providers"))
    if jaas_file:
        parts.append(jvm_option(f"-Djava.security.auth.login.config={jaas_file}", "--out"))
    if oauth_urls:  # Kafka >= 3.9.1 only calls token endpoints listed here
        parts.append(
            jvm_option(
                f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={','.join(oauth_urls)}", "sasl.token_endpoint_url"
            )
        )
    return " ".join([*parts, *([str(user_value)] if user_value else [])])


# Spark's web UI is an HTTP server in the driver (port 4040 and up, on every interface, with no login unless
# spark.ui.filters and ACLs are set up, and a kill link for every stage) that the mirror does not need: `secure-mirror
# run` shows progress and lag, and the metrics leave through the endpoints of docs/metrics.md. It is off unless the
# profile's mirror.spark.conf sets one of these (docs/security.md).
SPARK_UI_KEYS = ("spark.ui.enabled", "spark.ui.port")


def spark_conf(profile: Profile, out_dir: Path, secrets: Secrets = VALUES) -> dict[str, str]:
    """Spark configuration for the job: connector jars, the krb5.conf for driver and executors, the profile's conf,
    and Spark's UI off unless the profile asks for it (:data:`SPARK_UI_KEYS`); with references, every JVM's allow-list
    of Kafka config providers (exactly those the options declare)."""
    krb5 = krb5_conf_path(profile, out_dir) if profile.uses_kerberos else None
    spark = profile.mirror.spark
    executor_krb5 = SHIPPED_KRB5 if krb5 and ships_files(profile) else krb5
    driver_krb5 = SHIPPED_KRB5 if krb5 and spark.deploy_mode == "cluster" else krb5
    conf = {key: option_text(value) for key, value in spark.conf.items()}
    if not any(key in conf for key in SPARK_UI_KEYS):
        conf["spark.ui.enabled"] = "false"
    if spark.secures_internal_traffic:
        conf.update(SPARK_INTERNAL_SECURITY)
    conf.update(jar_conf(profile, out_dir))
    if profile.mirror.ride_through_seconds and "spark.task.maxFailures" not in conf:
        conf["spark.task.maxFailures"] = str(task_max_failures(profile.mirror.ride_through_seconds))
    urls = sorted(
        {c.sasl.token_endpoint_url for c in (profile.source, profile.target) if isinstance(c.sasl, OAuthSasl)}
    )
    roles = [("driver", driver_krb5), ("executor", executor_krb5)]
    if spark.master == "yarn" and spark.deploy_mode == "client":  # the application master runs in a container
        roles.append(("yarn.am", executor_krb5))
    allowed = automatic_option(provider_classes(profile.clusters().items())) if secrets.references else None
    for role, krb5_path in roles:
        key = f"spark.{role}.extraJavaOptions"
        jaas_file = _driver_jaas(profile, out_dir) if role == "driver" else None
        conf[key] = _java_options(krb5_path, urls, spark.conf.get(key), jaas_file, allowed)
    conf.update(delegation_token_conf(profile, secrets))
    return {key: value for key, value in conf.items() if value != ""}


def _driver_jaas(profile: Profile, out_dir: Path) -> str | None:
    """With delegation tokens, a JVM-wide JAAS file for the driver (a side's rendered ``jaas.conf``; every client
    of ours names its own login, so its entry is never used): Spark's Kafka connector then leaves the driver's
    clients on their keytab logins (``KafkaConfigUpdater.setAuthenticationConfigIfNeeded`` skips tokens when a
    JVM-wide JAAS configuration exists). Without it the driver's offset reader would keep the token current when it
    was created and fail to reconnect once that token expired, while the driver, which runs here, has the keytabs."""
    sides = profile.token_sides
    return str(out_dir / sides[0] / "jaas.conf") if sides else None


def delegation_token_conf(profile: Profile, secrets: Secrets = VALUES) -> dict[str, str]:
    """Spark's own Kafka token support (``spark.kafka.clusters.<side>.*``) for each side with ``executor_auth:
    delegation_token``: the driver's token manager obtains a token per side, logging in with that side's own
    ``sasl.jaas.config`` (``kafka.``-prefixed keys override the driver's login, so two identities in two realms
    each get their own token), and re-obtains it at 75% of its lifetime. A side's regex matches only its own
    brokers, so each client finds one token. docs/delegation-tokens.md."""
    conf: dict[str, str] = {}
    for side, cluster in profile.clusters().items():
        if cluster.uses_delegation_token:
            pairs = _token_cluster(cluster, side, secrets)
            conf.update({f"spark.kafka.clusters.{side}.{key}": value for key, value in pairs})
    if conf:
        conf["spark.security.credentials.kafka.enabled"] = "true"
    return conf


def _token_cluster(cluster: Cluster, side: str, secrets: Secrets) -> list[tuple[str, str]]:
    """One ``spark.kafka.clusters.<side>`` entry set (keytab: the local path, where the driver runs); it holds no
    secret (a keytab login, and no password of the TLS settings)."""
    login = java_connection(cluster, side, secrets=secrets)
    pairs = [
        ("auth.bootstrap.servers", login["bootstrap.servers"]),
        ("target.bootstrap.servers.regex", "|".join(java_regex_literal(s) for s in cluster.bootstrap_servers)),
        ("security.protocol", cluster.security_protocol),
        ("sasl.token.mechanism", TOKEN_MECHANISM),
    ]
    pairs += [(key, login[key]) for key in ("sasl.kerberos.service.name", "ssl.truststore.type") if key in login]
    pairs += (
        [("ssl.truststore.location", login["ssl.truststore.location"])] if "ssl.truststore.location" in login else []
    )
    kept = ("sasl.mechanism", "sasl.jaas.config", "ssl.endpoint.identification.algorithm")
    pairs += [(f"kafka.{key}", login[key]) for key in kept if key in login]
    return [(key, option_text(value)) for key, value in pairs]


def java_regex_literal(text: str) -> str:
    """``text`` matched literally by a Java regex (``Pattern.quote``'s form; host:port never holds ``\\E``)."""
    return "\\Q" + text + "\\E"


def shipped_files(profile: Profile, out_dir: Path) -> dict[str, str]:
    """The name a file has in every container -> the local file (a copy of that name in ``spark/`` is what
    ships). Keyed by name: one keytab used for both sides ships twice, as ``source-...`` and ``target-...``."""
    files: dict[str, str] = {}
    for side, cluster in profile.clusters().items():
        sasl = cluster.sasl
        if isinstance(sasl, GssapiSasl) and ships_keytab(profile, cluster) and (name := shipped_keytab(cluster, side)):
            files[name] = str(sasl.keytab)
    krb5 = krb5_conf_path(profile, out_dir) if profile.uses_kerberos else None
    if krb5:
        files[SHIPPED_KRB5] = krb5
    if profile.mirror.spark.deploy_mode == "cluster":
        files.update({name: str(out_dir / "spark" / name) for name in OPTION_FILES})
    return files


RETRY_PAUSE_MOST_SECONDS = 30  # a retried task's longest pause (jvm/sink securemirror.ride.Backoff.MOST_MS)
LOCAL_MASTER = re.compile(r"local(?:\[\s*([0-9]+|\*)\s*\])?")  # local, local[N], local[*]; not local[N,F]


def task_max_failures(ride_through_seconds: int) -> int:
    """Spark's tries of one task (``spark.task.maxFailures``) for a ride of ``ride_through_seconds``: more than the
    retries' pauses add up to over the ride (each at most :data:`RETRY_PAUSE_MOST_SECONDS`), so that the job's driver,
    which watches the failures' time (run/job/ride.py), gives up first and says why, never Spark's count."""
    return ride_through_seconds // RETRY_PAUSE_MOST_SECONDS + 10


def submitted_master(master: str, ride_through_seconds: int) -> str:
    """The master spark-submit gets: a local master gains its task retries (``local[N,F]``; Spark's local masters
    otherwise try a task once and ignore ``spark.task.maxFailures``); one that names its own stays as written."""
    found = LOCAL_MASTER.fullmatch(master)
    if not ride_through_seconds or found is None:
        return master
    return f"local[{found.group(1) or 1},{task_max_failures(ride_through_seconds)}]"


def spark_submit(profile: Profile, out_dir: Path, secrets: Secrets = VALUES) -> str:
    """A bash script running the mirror job with spark-submit (the profile's master and deploy mode)."""
    spark = profile.mirror.spark
    shipping = ships_files(profile)
    cluster_mode = spark.deploy_mode == "cluster"
    files = shipped_files(profile, out_dir) if shipping else {}
    conf = spark_conf(profile, out_dir, secrets)
    return templating.render(
        "templates/spark-submit.sh.j2",
        master=submitted_master(spark.master, profile.mirror.ride_through_seconds),
        deploy_mode=spark.deploy_mode,
        jars=conf["spark.jars"],
        conf={k: v for k, v in conf.items() if k != "spark.jars"},
        files=[str(out_dir / "spark" / name) for name in files],
        copies={name: local for name, local in files.items() if Path(local) != out_dir / "spark" / name},
        spark_dir=str(out_dir / "spark"),
        job=str(paths.job_script()),
        package_dir=str(Path(secure_mirror.__file__).parent),
        options_dir="." if cluster_mode else str(out_dir / "spark"),
        cluster_mode=cluster_mode,
        hadoop=_hadoop_submit(profile, out_dir),
        keytabs_ship=any(ships_keytab(profile, c) and c.mechanism == "GSSAPI" for c in profile.clusters().values()),
        token_sides=profile.token_sides,
    )


def _hadoop_submit(profile: Profile, out_dir: Path) -> dict[str, str] | None:
    """What spark-submit needs for a kerberized Hadoop: the rendered configuration folder, the identity it logs in
    with (Spark then obtains and renews HDFS delegation tokens), and krb5.conf for its own JVM."""
    if profile.hadoop is None:
        return None
    krb5 = krb5_conf_path(profile, out_dir)
    return {
        "conf_dir": str(out_dir / HADOOP_FOLDER),
        "principal": profile.hadoop.principal,
        "keytab": str(profile.hadoop.keytab),
        "submit_opts": jvm_option(f"-Djava.security.krb5.conf={krb5}", "krb5.conf path") if krb5 else "",
    }


HEARTBEAT_INTERVAL = "mirror.heartbeats-interval-seconds"
HEARTBEAT_STALE_AFTER = "mirror.heartbeats-stale-after-seconds"
HEARTBEAT_ALIASES = "mirror.heartbeats-aliases"  # JSON [source alias, target alias]


def heartbeat_options(profile: Profile) -> dict[str, str]:
    """What the job's driver needs to write MirrorMaker 2's heartbeats (``run/heartbeat_writer.py``): the flow's
    aliases, the interval (0: off) and how long one trigger may run before they stop."""
    beats = profile.mirror.heartbeats
    return {
        HEARTBEAT_INTERVAL: str(beats.interval_seconds),
        HEARTBEAT_STALE_AFTER: str(beats.stale_after_seconds),
        HEARTBEAT_ALIASES: json_inline([profile.source.alias, profile.target.alias]),
    }
