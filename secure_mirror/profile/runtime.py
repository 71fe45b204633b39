"""Where and how the mirror runs: Spark (``mirror.spark``, its connector jars), MirrorMaker 2 (``mirror.mm2``),
the Hadoop cluster (``hadoop``), and what Spark's delegation-token support needs of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from secure_mirror.profile import policy
from secure_mirror.profile.base import OptionValue, Strict, option_keys, protected_option
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.code_loading import refuse_kafka_code, spark_code_problem
from secure_mirror.profile.fields import InputFile, KeytabFile, Problem, in_profile_folder
from secure_mirror.profile.policy import shorten
from secure_mirror.profile.principals import parse_principal
from secure_mirror.profile.redaction import redaction_problem
from secure_mirror.profile.security import GssapiSasl

# Spark conf the profile owns: the connector jars, and Spark's own Kafka settings, which carry SASL settings
# (spark.kafka.clusters.*) or may come to; only the caches of Spark's Kafka connector are an operator's to tune
# (issue 26: with mirror.spark.source: kafka at scale, spark.kafka.consumer.cache.capacity), as they bear no identity.
PROTECTED_SPARK_CONF = re.compile(
    r"^(spark\.jars|spark\.kafka\.(?!(consumer\.cache|consumer\.fetchedData\.cache|producer\.cache)\.).*)$"
)
# Spark's own connections (driver <-> executors: task closures carrying the job's Kafka options, block transfers) and
# its local spill files, authenticated and AES-encrypted. On YARN Spark makes a secret and a key per application and
# hands them to the containers in YARN's credentials, so nothing is to configure; elsewhere the cluster's operators
# must share a secret (docs/security.md).
SPARK_INTERNAL_SECURITY = {
    "spark.authenticate": "true",
    "spark.network.crypto.enabled": "true",
    "spark.io.encryption.enabled": "true",
}


# Spark conf keys that hold a secret (their last words, as Spark's own redaction would see them): mirror.spark.conf is
# written into the rendered spark-submit.sh and reaches spark-submit's argument list, so such a value has no place in
# it. ``spark.authenticate.secret`` and ``spark.ssl.keyStorePassword`` belong to the submitting machine's
# spark-defaults.conf; ``spark.hadoop.dfs.block.access.token.enable`` is no secret and passes, nor does
# ``spark.kerberos.renewal.credentials`` (it names a kind: keytab or ccache).
SPARK_SECRET_KEY = re.compile(r"(secret|password|passwd|token|access[._-]?key|secret[._-]?key|credentials?)$", re.I)
SPARK_KEYS_NAMING_NO_SECRET = frozenset({"spark.kerberos.renewal.credentials"})
# Spark settings that encrypt its own connections (any one of them, with spark.authenticate): AES-based encryption,
# the older SASL encryption, or TLS for RPC (Spark 4.0).
SPARK_NETWORK_ENCRYPTION = (
    "spark.network.crypto.enabled",
    "spark.authenticate.enableSaslEncryption",
    "spark.ssl.rpc.enabled",
)


class SparkJars(Strict):
    """Where the job gets Spark's Kafka connector (spark-sql-kafka-0-10 for Spark 4.0.0, Scala 2.13, and the jars it
    needs): from ``local_dir``; else resolved by Spark at start (``spark.jars.packages``) from ``repositories`` or the
    Ivy settings file, Maven Central when neither is named. A checkout set up by scripts/setup uses its ``.deps``
    unless repositories or Ivy settings are named."""

    repositories: list[str] = Field(
        default_factory=list,
        description="Maven repositories Spark resolves the connector from (spark.jars.repositories), e.g. an "
        "internal proxy; credentials belong in an Ivy settings file, never in the URL",
    )
    ivy_settings: InputFile | None = Field(
        None, description="an Ivy settings file for the resolution (spark.jars.ivySettings)"
    )
    local_dir: Path | None = Field(
        None, description="a folder holding the connector's jars (a bundle's jars/): no resolution, nothing fetched"
    )

    @field_validator("repositories")
    @classmethod
    def _repositories(cls, value: list[str]) -> list[str]:
        for index, url in enumerate(value):
            if not re.fullmatch(r"(https?|file)://[^\s,@]+", url):
                raise Problem(
                    str(index),
                    "must be an http(s):// or file:// URL without a comma or user@ (spark-submit's argument list "
                    "shows it; put credentials in an Ivy settings file and name it in ivy_settings)",
                )
        return value

    @field_validator("local_dir")
    @classmethod
    def _local_dir(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        path = in_profile_folder(value.expanduser(), info)
        if (info.context or {}).get("check_files") and not any(path.glob("spark-sql-kafka-0-10_2.13-*.jar")):
            raise ValueError(
                f"{shorten(str(path))} holds no spark-sql-kafka-0-10_2.13-*.jar; name the folder of the connector's "
                "jars (secure-mirror bundle writes them into its jars/)"
            )
        return path

    @model_validator(mode="after")
    def _one_source(self) -> SparkJars:
        if self.local_dir is not None and self.resolves:
            raise Problem("local_dir", "name either local_dir or repositories/ivy_settings, not both")
        return self

    @property
    def resolves(self) -> bool:
        """True when the profile asks Spark to resolve the connector from named repositories or Ivy settings."""
        return bool(self.repositories) or self.ivy_settings is not None


class Spark(Strict):
    master: str = "local[2]"
    deploy_mode: Literal["client", "cluster"] = "client"
    conf: dict[str, OptionValue] = Field(default_factory=dict, description="extra Spark configuration")
    max_offsets_per_trigger: int | None = Field(None, gt=0)
    # The source (docs/architecture.md, "The source"): "mirror" is the mirror's own (jvm/sink, securemirror.source),
    # whose tasks each read many partitions with one consumer, under either trigger; "kafka" is Spark's Kafka source
    # (one task and one cached consumer per topic-partition: per micro-batch, or for the whole continuous query).
    source: Literal["mirror", "kafka"] = Field(
        "mirror", description="the source: mirror (tasks each read many partitions) or kafka (Spark's)"
    )
    tasks: int | None = Field(
        None,
        gt=0,
        le=10000,
        description="with source mirror: the tasks of each micro-batch (or of the continuous query), each reading "
        "its share of the partitions with one consumer (default: Spark's default parallelism, the master's cores)",
    )
    # Continuous processing (docs/continuous.md): long-running tasks (one per slot with the mirror's source, one per
    # source partition with Spark's) write records as they arrive; every continuous_interval_ms an epoch commits (the
    # sink flushes, the offsets are checkpointed).
    trigger: Literal["micro_batch", "continuous"] = Field(
        "micro_batch", description="micro_batch (default) or continuous: low latency, at_least_once only"
    )
    continuous_interval_ms: int = Field(
        1000,
        gt=0,
        le=3600000,
        description="with trigger continuous: ms between epoch commits (a stop or crash re-sends at most the records "
        "since the last one)",
    )
    jars: SparkJars = Field(default_factory=SparkJars, description="where the job gets Spark's Kafka connector")

    require_encrypted_cluster: bool = Field(
        True,
        description="on a standalone or Kubernetes master, the job starts only when the cluster's Spark configuration "
        "authenticates and encrypts Spark's own connections (spark.authenticate with spark.network.crypto.enabled), "
        "which carry the job's Kafka options and shipped keytabs to executors; false accepts them in clear",
    )

    @field_validator("conf")
    @classmethod
    def _conf(cls, value: dict[str, OptionValue]) -> dict[str, OptionValue]:
        option_keys(
            value,
            PROTECTED_SPARK_CONF.match,
            "is rendered from the profile (connector jars, Kafka security); change the profile instead",
        )
        for key in value:
            if SPARK_SECRET_KEY.search(key) and key.lower() not in SPARK_KEYS_NAMING_NO_SECRET:
                raise Problem(
                    key,
                    "names a secret, and mirror.spark.conf is written into the rendered spark-submit.sh and "
                    "spark-submit's argument list; set it in the Spark configuration of the machine that submits "
                    "(spark-defaults.conf in SPARK_CONF_DIR, readable only by the mirror's user)",
                )
            if (reason := redaction_problem(key, value[key])) is not None:  # Spark would hide less than by default
                raise Problem(key, reason)
            if (
                reason := spark_code_problem(key, value[key])
            ) is not None:  # code loaded beside both sides' credentials
                raise Problem(key, reason)
        return value

    @model_validator(mode="after")
    def _internal_security_kept(self) -> Spark:
        if self.secures_internal_traffic:
            for key in self.conf:
                if key.lower() in SPARK_INTERNAL_SECURITY:
                    raise Problem(
                        f"conf.{key}",
                        "on YARN secure-mirror turns on Spark's authentication and encryption of its own connections "
                        "and spill files (the job's options travel to executors over them); remove the setting",
                    )
        return self

    @property
    def is_local(self) -> bool:
        return self.master.startswith("local")

    @property
    def secures_internal_traffic(self) -> bool:
        """True when render turns on ``SPARK_INTERNAL_SECURITY``: on YARN, which distributes the secret itself."""
        return self.master == "yarn"

    @property
    def checks_cluster_security(self) -> bool:
        """True when the job must find Spark's own connections authenticated and encrypted by the cluster's
        configuration before it runs a task (``SPARK_NETWORK_ENCRYPTION``): executors elsewhere, on a master where
        the cluster's operators share the secret (standalone, Kubernetes), unless the profile accepts clear text."""
        return self.require_encrypted_cluster and not self.is_local and not self.secures_internal_traffic


class MirrorMaker2(Strict):
    replication_factor: int = Field(-1, ge=-1, description="for created topics; -1 uses the broker's default")
    properties: dict[str, OptionValue] = Field(default_factory=dict, description="extra mm2.properties lines")

    @field_validator("replication_factor")
    @classmethod
    def _not_zero(cls, value: int) -> int:
        if value == 0:
            raise ValueError("must be -1 (the broker's default) or at least 1")
        return value

    @field_validator("properties")
    @classmethod
    def _not_security(cls, value: dict[str, OptionValue]) -> dict[str, OptionValue]:
        owned = option_keys(
            value,
            lambda key: protected_option(key) or key.lower() == "clusters",
            "is rendered from the profile (clusters, flows, security); change the profile instead",
        )
        return refuse_kafka_code(owned)


HADOOP_SITE_FILE = re.compile(r"^[a-z][a-z0-9-]*-site\.xml$")


class Hadoop(Strict):
    """A Hadoop cluster the job runs on (YARN) or checkpoints to (HDFS): its client configuration and the Kerberos
    identity Spark logs in with to obtain and renew HDFS delegation tokens (``--principal``/``--keytab``)."""

    conf_dir: Path | None = Field(
        None,
        description="the cluster's client configuration folder (its *-site.xml "
        "files are read and rendered again into the output's hadoop/ folder)",
    )
    properties: dict[str, dict[str, OptionValue]] = Field(
        default_factory=dict,
        description="per file (core-site.xml, hdfs-site.xml, yarn-site.xml): properties set over the folder's",
    )
    principal: str = Field(description="the Kerberos principal Spark logs in with for HDFS and YARN")
    keytab: KeytabFile

    @field_validator("principal")
    @classmethod
    def _principal(cls, value: str) -> str:
        parse_principal(value)
        return value

    @field_validator("conf_dir")
    @classmethod
    def _conf_dir(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        folder = in_profile_folder(value, info)
        if not folder.is_dir() or not any(folder.glob("*-site.xml")):
            raise Problem(
                "conf_dir",
                f"{folder} is not a folder holding *-site.xml files; point it at the cluster's "
                "client configuration (e.g. /etc/hadoop/conf)",
            )
        return Path(policy.check(str(folder)))

    @field_validator("properties")
    @classmethod
    def _files(cls, value: dict[str, dict[str, OptionValue]]) -> dict[str, dict[str, OptionValue]]:
        for name, properties in value.items():
            if not HADOOP_SITE_FILE.match(name):
                raise Problem(name, "is not a Hadoop site file name; use core-site.xml, hdfs-site.xml, yarn-site.xml")
            for key in properties:
                if (reason := policy.option_key_problem(key)) is not None:
                    raise Problem(f"{name}.{key}", reason)
        return value

    @model_validator(mode="after")
    def _conf_dir_or_properties_given(self) -> Hadoop:
        if self.conf_dir is None and not self.properties:
            raise Problem(
                "conf_dir",
                "the hadoop section needs conf_dir or properties (at least fs.defaultFS in "
                "core-site.xml and the ResourceManager's addresses in yarn-site.xml)",
            )
        return self


def delegation_token_problem(cluster: Cluster, spark: Spark, hadoop: Hadoop | None) -> str | None:
    """Why ``executor_auth: delegation_token`` cannot work for this side, or None (docs/delegation-tokens.md)."""
    if not isinstance(cluster.sasl, GssapiSasl):
        return (
            f"delegation_token needs a GSSAPI identity to obtain the token with (this side uses "
            f"{cluster.mechanism or cluster.security_protocol}; a password would travel in Spark's configuration "
            "to every container); use sasl.mechanism GSSAPI or executor_auth: keytab"
        )
    tls = cluster.tls_settings
    if tls.truststore_password is not None or tls.mutual:
        return (
            "delegation_token passes this side's TLS settings to Spark's token manager through Spark's "
            "configuration, which reaches every container, so it takes no secret: use a PEM CA (tls.ca) without "
            "tls.truststore_password, tls.certificate and tls.key, or executor_auth: keytab"
        )
    if spark.master != "yarn":
        return (
            f"delegation_token needs mirror.spark.master: yarn (Spark obtains and hands out Kafka tokens only "
            f"on YARN and Kubernetes; here the master is {spark.master}); use executor_auth: keytab"
        )
    if spark.deploy_mode != "client":
        return (
            "delegation_token needs mirror.spark.deploy_mode: client (in cluster mode the driver's container "
            "would need the keytab to obtain new tokens); set deploy_mode: client or executor_auth: keytab"
        )
    if hadoop is None:
        return (
            "delegation_token needs the hadoop section (Spark obtains and renews tokens only with its "
            "--principal/--keytab on a kerberized cluster); add hadoop or use executor_auth: keytab"
        )
    return None
