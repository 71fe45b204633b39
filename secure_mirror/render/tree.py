"""Render every file of a profile into a folder, all or nothing.

Everything is rendered in memory first (so a refused value writes nothing), then written into a temporary
folder next to the destination and renamed into place. Files holding a secret are created with mode 0600.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from secure_mirror import folders
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.profile import policy
from secure_mirror.profile.cluster import SIDES, Cluster, Side
from secure_mirror.profile.job_settings import JOB_FILE, SINK_OPTIONS_FILE, SOURCE_OPTIONS_FILE
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl, OAuthSasl
from secure_mirror.render import (
    acls,
    hadoop_conf,
    jaas,
    java_properties,
    job_file,
    krb5,
    librdkafka,
    mm2,
    ranger,
    spark,
    spark_jars,
    templating,
)
from secure_mirror.render.encoders import json_text, sh
from secure_mirror.render.java_properties import OAUTH_ALLOWED_URLS
from secure_mirror.render.providers import VALUES, Secrets, automatic_option, hadoop_classpath_note, provider_classes

CCACHE_DIR = "ccache"


@dataclass(frozen=True)
class RenderedFile:
    path: str  # relative to the output folder
    content: str
    purpose: str
    secret: bool = False
    executable: bool = False

    @property
    def mode(self) -> int:
        return 0o600 if self.secret else (0o755 if self.executable else 0o644)


class Named(NamedTuple):
    """A rendered file's name and what it is for."""

    name: str
    purpose: str


# A side's Kafka client files (in the side's folder) and the Kerberos configuration: their one home, for render and
# for failover's cut-over, which lists them without rendering (client_files).
JAAS_CONF = Named("jaas.conf", "a KafkaClient section for -Djava.security.auth.login.config")
CLIENT_PROPERTIES = Named(
    "client.properties", "Kafka's Java tools: security settings with the identity inline (sasl.jaas.config)"
)
LIBRDKAFKA_CONF = Named("librdkafka.conf", "kcat -F and confluent-kafka: the same cluster and identity for librdkafka")
KRB5_CONF = Named("krb5.conf", "Kerberos client configuration naming both realms' KDCs")


def client_files(profile: Profile, side: Side, secrets: Secrets = VALUES) -> list[Named]:
    """The files render writes for ``side``'s Kafka clients (paths in the output folder), and krb5.conf where it
    writes one, in render's order; nothing is rendered, so no secret is read."""
    names = [JAAS_CONF] if writes_jaas_conf(profile.cluster(side), secrets) else []
    files = [Named(f"{side}/{name}", purpose) for name, purpose in [*names, CLIENT_PROPERTIES, LIBRDKAFKA_CONF]]
    return files + ([KRB5_CONF] if krb5.default_realm(profile) is not None else [])


def writes_jaas_conf(cluster: Cluster, secrets: Secrets = VALUES) -> bool:
    """A side with SASL gets a jaas.conf, unless its login holds a secret and secrets are references: the JDK's
    parser of that file reads ``${...}`` as a system property, so it cannot carry one (client.properties can)."""
    return cluster.sasl is not None and (isinstance(cluster.sasl, GssapiSasl) or not secrets.references)


def holds_secret(cluster: Cluster, secrets: Secrets = VALUES) -> bool:
    """True when files rendered for ``cluster`` carry a resolved secret (password, client secret, private key);
    never with references (librdkafka.conf aside: :func:`librdkafka.holds_secret`)."""
    if secrets.references:
        return False
    tls = cluster.tls
    tls_secret = tls is not None and (tls.mutual or tls.key_password or tls.truststore_password)
    return bool(tls_secret) or (cluster.sasl is not None and not isinstance(cluster.sasl, GssapiSasl))


def _cluster_files(profile: Profile, side: Side, out_dir: Path, secrets: Secrets) -> list[RenderedFile]:
    cluster = profile.cluster(side)
    secret = holds_secret(cluster, secrets)
    krb5_path = krb5.krb5_conf_path(profile, out_dir)
    header = [
        f"Kafka Java client settings for the {side} cluster ({cluster.alias}), rendered by secure-mirror.",
        "Use with kafka-console-consumer.sh --consumer.config / --producer.config / --command-config.",
    ]
    if isinstance(cluster.sasl, GssapiSasl) and krb5_path:
        header.append(f"Kerberos: export KAFKA_OPTS={sh('-Djava.security.krb5.conf=' + krb5_path)}")
    if isinstance(cluster.sasl, OAuthSasl):  # Kafka >= 3.9.1 only calls token endpoints it is allowed to
        header.append(f"OAuth: export KAFKA_OPTS={sh(f'-D{OAUTH_ALLOWED_URLS}={cluster.sasl.token_endpoint_url}')}")
    if secrets.references and (classes := provider_classes([(side, cluster)])):  # Kafka 3.8+'s allow-list
        option = sh(automatic_option(classes))
        header.append(f"Secrets are references Kafka's config providers resolve: add {option} to KAFKA_OPTS")
        header += hadoop_classpath_note([(side, cluster)])
    files = [
        RenderedFile(
            f"{side}/{CLIENT_PROPERTIES.name}",
            java_properties.properties_text(java_properties.client_properties(cluster, side, secrets), header),
            CLIENT_PROPERTIES.purpose,
            secret,
        ),
        RenderedFile(
            f"{side}/{LIBRDKAFKA_CONF.name}",
            librdkafka.librdkafka_file(cluster, side, str(out_dir / CCACHE_DIR), krb5_path, secrets),
            LIBRDKAFKA_CONF.purpose,
            librdkafka.holds_secret(cluster, side, secrets) if secrets.references else secret,
        ),
    ]
    if writes_jaas_conf(cluster, secrets):
        path = f"{side}/{JAAS_CONF.name}"
        files.insert(
            0, RenderedFile(path, jaas.jaas_file(cluster, side, str(out_dir / path)), JAAS_CONF.purpose, secret)
        )
    return files


def _spark_files(profile: Profile, out_dir: Path, secrets: Secrets) -> list[RenderedFile]:
    ivy = spark_jars.ivy_settings(profile)
    resolution = (
        [RenderedFile(spark_jars.IVY_SETTINGS_FILE, ivy, "where Spark resolves its Kafka connector")] if ivy else []
    )
    return [
        *resolution,
        RenderedFile(
            f"spark/{SOURCE_OPTIONS_FILE}",
            json_text(spark.source_options(profile, secrets)),
            "Spark readStream options for the source (kafka.* with the source identity)",
            holds_secret(profile.source, secrets),
        ),
        RenderedFile(
            f"spark/{SINK_OPTIONS_FILE}",
            json_text(spark.sink_options(profile, secrets)),
            "Spark writeStream options for the target (kafka.* with the target identity)",
            holds_secret(profile.target, secrets),
        ),
        RenderedFile(
            "spark/spark-conf.json",
            json_text(spark.spark_conf(profile, out_dir, secrets)),
            "Spark configuration: connector jars and -Djava.security.krb5.conf for driver and executors",
        ),
        RenderedFile(
            "spark/spark-submit.sh",
            spark.spark_submit(profile, out_dir, secrets),
            "runs the mirror job with spark-submit",
            executable=True,
        ),
        RenderedFile(
            f"spark/{JOB_FILE}",
            job_file.job_json(profile),
            "the job's own settings: topic selection, rename rule, partitioning, trigger, fingerprint",
        ),
    ]


def _hadoop_files(profile: Profile) -> list[RenderedFile]:
    if profile.hadoop is None:
        return []
    return [
        RenderedFile(
            f"{hadoop_conf.FOLDER}/{name}",
            text,
            "Hadoop client configuration (spark-submit's HADOOP_CONF_DIR): HDFS, YARN and their Kerberos principals",
        )
        for name, text in hadoop_conf.site_files(profile.hadoop).items()
    ]


ACL_FILE_PURPOSES = {
    "source.acls.json": "ACLs the mirror identity needs on the source",
    "target.acls.json": "ACLs the mirror identity needs on the target",
    "mm2-source.acls.json": "ACLs MirrorMaker 2 needs on the source (only if mm2/mm2.properties is used)",
    "mm2-target.acls.json": "ACLs MirrorMaker 2 needs on the target (only if mm2/mm2.properties is used)",
}


def _other_files(
    profile: Profile, out_dir: Path, plans: dict[str, acls.AclPlan], secrets: Secrets
) -> list[RenderedFile]:
    files = [
        RenderedFile(
            "mm2/mm2.properties",
            mm2.mm2_properties(
                profile,
                str(out_dir / "mm2" / "mm2.properties"),
                krb5.krb5_conf_path(profile, out_dir) if profile.uses_kerberos else None,
                secrets,
            ),
            "the same mirror for MirrorMaker 2 (connect-mirror-maker.sh)",
            holds_secret(profile.source, secrets) or holds_secret(profile.target, secrets),
        ),
        *(RenderedFile(f"acls/{name}", plan.to_json(), ACL_FILE_PURPOSES[name]) for name, plan in plans.items()),
    ]
    # kafka-acls.sh for the sides whose brokers authorize by Kafka's ACLs (acls.format kafka or both); the plans'
    # JSON stays for every side, as the plan of record pre-flight and the MANIFEST read
    if kafka_sides := [plans[f"{side}.acls.json"] for side in SIDES if profile.cluster(side).acls.kafka]:
        files.append(
            RenderedFile(
                "acls/apply-acls.sh",
                acls.apply_acls_script(kafka_sides, out_dir),
                "kafka-acls.sh commands granting those ACLs, for review",
                executable=True,
            )
        )
    if (text := krb5.krb5_conf(profile)) is not None:
        files.insert(0, RenderedFile(KRB5_CONF.name, text, KRB5_CONF.purpose))
    return files + _ranger_files(profile, plans)


def _ranger_files(profile: Profile, plans: dict[str, acls.AclPlan]) -> list[RenderedFile]:
    """The job's grants as Apache Ranger policies, for each side whose ``acls.format`` names ranger."""
    sides = [
        ranger.plan_policies(plans[f"{side}.acls.json"], profile) for side in SIDES if profile.cluster(side).acls.ranger
    ]
    files = [
        RenderedFile(
            f"ranger/{ranger.POLICIES_FILE.format(side=found.side)}",
            found.to_json(),
            f"Apache Ranger policies (REST API v2) the mirror identity needs on the {found.side}",
        )
        for found in sides
    ]
    if sides:
        files.append(
            RenderedFile(
                "ranger/apply-policies.sh",
                ranger.apply_script(sides),
                "curl calls creating or replacing those policies in Ranger Admin, for review",
                executable=True,
            )
        )
    return files


def render_files(profile: Profile, out_dir: Path, secrets: Secrets = VALUES) -> list[RenderedFile]:
    """Every file (content in memory), as seen from its final location ``out_dir``; writes nothing. ``secrets``:
    each secret as its value or as a reference Kafka resolves (render/providers.py)."""
    out_dir = Path(out_dir).resolve()
    plans = acls.all_plans(profile)  # each plan made (and checked against the privilege rule) once
    files = [
        *_cluster_files(profile, "source", out_dir, secrets),
        *_cluster_files(profile, "target", out_dir, secrets),
        *_spark_files(profile, out_dir, secrets),
        *_hadoop_files(profile),
        *_other_files(profile, out_dir, plans, secrets),
    ]
    return [*files, *_manifest_files(profile, files, plans, secrets)]


def _manifest_files(
    profile: Profile, files: list[RenderedFile], plans: dict[str, acls.AclPlan], secrets: Secrets
) -> list[RenderedFile]:
    entries = [{"path": f.path, "purpose": f.purpose, "secret": f.secret, "mode": f"{f.mode:04o}"} for f in files]
    entries.append(
        {
            "path": f"{CCACHE_DIR}/",
            "purpose": "Kerberos credential caches (KRB5CCNAME=DIR:...) of librdkafka clients",
            "secret": True,
            "mode": "0700",
        }
    )
    manifest: dict[str, object] = {
        "profile": {"source": profile.source.alias, "target": profile.target.alias},
        "grants": [
            {"file": f"acls/{name}", "side": plan.side, "principal": plan.principal, "covers": acls.plan_in_words(plan)}
            for name, plan in plans.items()
        ],
        "files": entries
        + [
            {"path": "manifest.json", "purpose": "this list", "secret": False, "mode": "0644"},
            {"path": "MANIFEST.md", "purpose": "this list, for people", "secret": False, "mode": "0644"},
        ],
    }
    if secrets.references:  # only then: a values render's manifest stays as it was
        manifest["secrets"] = "references"
    holding = [f.path for f in files if f.secret]  # the credential caches' folder aside: clients fill it later
    markdown = templating.render("templates/MANIFEST.md.j2", manifest=manifest, holding=holding)
    return [
        RenderedFile("manifest.json", json_text(manifest), "this list"),
        RenderedFile("MANIFEST.md", markdown, "this list, for people"),
    ]


def render_all(
    profile: Profile, out_dir: Path | str, force: bool = False, secrets: Secrets = VALUES
) -> list[RenderedFile]:
    """Render into ``out_dir`` all or nothing; refuse a non-empty ``out_dir`` unless ``force``.

    ``out_dir`` is taken as named and never through a symbolic link (``folders``); its missing parents are made
    along that path, and the new tree's root is never wider than the folder it replaces."""
    out_dir = folders.named(out_dir)
    policy.check_argument(str(out_dir), "--out")  # the folder's path is written into the rendered files
    folders.check_creatable(out_dir, "--out")  # a symbolic link, dangling or not, is refused here
    policy.check_argument(str(out_dir.resolve()), "--out")  # the same folder (no link): as render_files writes it
    if out_dir.exists() and (not out_dir.is_dir() or (any(out_dir.iterdir()) and not force)):
        raise BadInputError(f"{out_dir} exists and is not empty; choose another --out or pass --force to replace it")
    files = render_files(profile, out_dir, secrets)
    folders.make_parents(out_dir, "--out")
    root_mode = folders.narrowest_mode(out_dir, 0o755 & ~_umask())  # the tree is not secret, some files are
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    except OSError as exc:  # no permission in the folder
        folders.refuse(out_dir, "--out", exc.strerror or type(exc).__name__)
    try:
        _write_tree(staging, files, root_mode)
        _swap_into_place(staging, out_dir)
    except OSError as exc:  # a full disk, a quota: the staging copy goes, the old folder stays as it was
        shutil.rmtree(staging, ignore_errors=True)
        raise EnvironmentNotReady(
            f"--out {out_dir}: the rendered files could not be written ({exc.strerror})"
        ) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return files


def _write_tree(root: Path, files: list[RenderedFile], root_mode: int) -> None:
    (root / CCACHE_DIR).mkdir(mode=0o700)
    for rendered in files:
        path = root / rendered.path
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, rendered.mode)  # created with its mode
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(rendered.content)
    os.chmod(root, root_mode)  # mkdtemp made it 0700; last, so a narrow mode cannot stop the writing


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _swap_into_place(staging: Path, out_dir: Path) -> None:  # rename never follows a link at either name
    if not os.path.lexists(out_dir):
        os.rename(staging, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
    os.rename(out_dir, old / "previous")
    try:
        os.rename(staging, out_dir)
    except OSError:
        os.rename(old / "previous", out_dir)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
