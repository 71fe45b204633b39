"""The profiles a running sandbox writes, in the profile format of docs/profile-example.yaml."""

from __future__ import annotations

import sys

import yaml

from secure_mirror.sandbox import credstore
from secure_mirror.sandbox.hadoop import USER
from secure_mirror.sandbox.kafka import SSL_PRINCIPAL_RULES
from secure_mirror.sandbox.kdc import CORP_DOMAIN, CORP_MIRROR, CORP_REALM, CORP_RULES
from secure_mirror.sandbox.spark_standalone import spark_home


def cluster_dict(sb, side: str, alias: str, mechanism: str = "GSSAPI", who: str = "mirror") -> dict:
    """A profile side for ``who`` (mirror or admin) on the sandbox's ``side`` cluster. ``mechanism`` is a SASL
    mechanism, or ``SSL`` for the listener that authenticates the mirror by its client certificate."""
    s = sb.sides[side]
    tls = {"ca": str(sb.ca_file), "hostname_verification": True}
    if mechanism == "SSL":
        certificate, key = sb.client_pair(side)
        return {
            "alias": alias,
            "bootstrap_servers": [n.ssl_bootstrap for n in s.nodes],
            "security_protocol": "SSL",
            "tls": tls | {"certificate": str(certificate), "key": str(key)},
            "principal_mapping": {"ssl_principal_mapping_rules": ",".join(SSL_PRINCIPAL_RULES)},
        }
    if mechanism == "GSSAPI":
        sasl = {
            "mechanism": "GSSAPI",
            "principal": s.mirror_principal if who == "mirror" else s.admin_principal,
            "keytab": str(sb.keytab(side, who)),
            "service_name": "kafka",
        }
    elif mechanism == "OAUTHBEARER":
        sasl = {
            "mechanism": "OAUTHBEARER",
            "client_id": "mirror",
            "client_secret": f"file:{sb.oauth_secret_file}",
            "token_endpoint_url": sb.token_endpoint,
        }
    else:
        sasl = {"mechanism": mechanism, "username": "mirror", "password": f"file:{sb.scram_password_file(side)}"}
    return {
        "alias": alias,
        "bootstrap_servers": s.bootstrap_servers,  # every broker of the side
        "security_protocol": "SASL_SSL",
        "sasl": sasl,
        "tls": tls,
    }


def profile_dict(
    sb,
    *,
    target_mechanism: str = "GSSAPI",
    topics: str = "demo\\..*",
    source_mechanism: str = "GSSAPI",
    across_wan: bool = False,
) -> dict:
    """The sandbox's mirror profile; ``across_wan``: the source reached through the link's proxy (sandbox/wan.py)."""
    kdc_ports = sb.state["kdc_ports"]
    data: dict = {
        "version": 1,
        "kerberos": {
            "realms": {
                s.realm: {"kdcs": [f"127.0.0.1:{port}"], "domains": [s.domain]}
                for s, port in zip(sb.sides.values(), kdc_ports)
            },
            "default_realm": "SOURCE.TEST",
        },
        "source": cluster_dict(sb, "source", "src", source_mechanism)
        | ({"bootstrap_servers": sb.wan_bootstrap_servers()} if across_wan else {}),
        "target": cluster_dict(sb, "target", "tgt", target_mechanism),
        "mirror": {
            "topics": {"include": topics},
            "rename": {"rule": "alias_prefix"},
            "starting_offsets": "earliest",
            "checkpoint_location": str(sb.base / "checkpoints"),
            "spark": {"master": "local[2]"},
        },
    }
    if (brokers := len(sb.sides["target"].nodes)) > 1:
        # MirrorMaker 2's topics as many replicas as the brokers give the job's (default.replication.factor); the job
        # has no setting of its own: it creates its target topics with the target brokers' default
        data["mirror"]["mm2"] = {"replication_factor": min(brokers, 3)}
    return data


def corp_profile_dict(sb) -> dict:
    """Both sides as mirror@CORP.TEST, a realm the cluster realms trust; each side's brokers map it by a rule."""
    data = profile_dict(sb)
    data["kerberos"]["realms"][CORP_REALM] = {
        "kdcs": [f"127.0.0.1:{sb.state['corp_kdc_port']}"],
        "domains": [CORP_DOMAIN],
    }
    for side in ("source", "target"):
        data[side]["sasl"] |= {"principal": CORP_MIRROR, "keytab": str(sb.corp_keytab())}
        data[side]["principal_mapping"] = {
            "default_realm": sb.sides[side].realm,
            "principal_to_local_rules": list(CORP_RULES),
        }
    return data


def yarn_profile_dict(sb, deploy_mode: str, executor_auth: str = "keytab") -> dict:
    """The mirror on the sandbox's YARN (``deploy_mode`` client or cluster), checkpointing to its HDFS, Spark and
    HDFS logged in as the source side's mirror identity (``mirror`` to Hadoop); ``executor_auth`` on both sides
    (``delegation_token``: executors log in with Kafka delegation tokens, no keytab ships)."""
    cluster = sb.hadoop()
    data = profile_dict(sb)
    source = sb.sides["source"]
    data["hadoop"] = {
        "properties": cluster.client_properties(),
        "principal": source.mirror_principal,
        "keytab": str(sb.keytab("source", "mirror")),
    }
    data["mirror"]["checkpoint_location"] = f"{cluster.default_fs}/user/{USER}/checkpoints-{deploy_mode}"
    data["mirror"]["spark"] = {
        "master": "yarn",
        "deploy_mode": deploy_mode,
        "conf": {
            # the containers run on this machine: Spark's jars and this Python from here, not uploaded per run
            "spark.yarn.jars": f"local:{spark_home() / 'jars'}/*",
            "spark.pyspark.python": sys.executable,
            "spark.executor.instances": 1,
            "spark.executor.cores": 1,
            "spark.executor.memory": "512m",
            "spark.driver.memory": "512m",
            "spark.yarn.am.memory": "384m",
            "spark.scheduler.minRegisteredResourcesRatio": 1.0,
        },
    }
    if executor_auth != "keytab":
        data["mirror"]["checkpoint_location"] += f"-{executor_auth}"
        for side in ("source", "target"):
            data[side]["executor_auth"] = executor_auth
        # the sandbox's tokens live seconds: Spark obtains the next one at half a lifetime (its default, 0.75, leaves
        # a task that starts just before a renewal a quarter of 30 s to connect with the token it read)
        data["mirror"]["spark"]["conf"]["spark.security.credentials.renewalRatio"] = 0.5
    return data


def sandbox_profiles(sb) -> dict[str, str]:
    head = "# Written by `secure-mirror sandbox up`: a ready profile for this sandbox's two clusters.\n"
    wan = sb.state.get("wan", {})
    through = "# The source is reached across the link of `sandbox up --wan` (its proxy: docs/wan.md).\n"
    profiles = {
        "profile.yaml": head
        + (through if wan.get("profile") else "")
        + yaml.safe_dump(profile_dict(sb, across_wan=bool(wan.get("profile"))), sort_keys=False),
        "profile-scram.yaml": head
        + "# The target side authenticates with SCRAM-SHA-512 over TLS.\n"
        + yaml.safe_dump(profile_dict(sb, target_mechanism="SCRAM-SHA-512"), sort_keys=False),
    }
    if wan.get("pid"):
        profiles["profile-wan.yaml"] = (
            head + through + yaml.safe_dump(profile_dict(sb, across_wan=True), sort_keys=False)
        )
    if sb.credential_store.exists():  # a sandbox started before it had one has not
        data = profile_dict(sb, target_mechanism="SCRAM-SHA-512")
        data["target"]["sasl"]["password"] = f"{credstore.provider(sb.credential_store)}#{credstore.TARGET_ALIAS}"
        profiles["profile-jceks.yaml"] = (
            head + "# As profile-scram.yaml, the target's password read from a Hadoop credential store "
            "(made with `hadoop credential create`).\n" + yaml.safe_dump(data, sort_keys=False)
        )
    if sb.sides["source"].ssl_port and sb.oauth:
        profiles["profile-plain-scram256.yaml"] = (
            head + "# The source side logs in with PLAIN, the target side with "
            "SCRAM-SHA-256, both over TLS.\n"
            + yaml.safe_dump(
                profile_dict(sb, source_mechanism="PLAIN", target_mechanism="SCRAM-SHA-256"), sort_keys=False
            )
        )
        profiles["profile-oauth-mtls.yaml"] = (
            head + "# The source side logs in with OAUTHBEARER (the sandbox's "
            "identity provider), the target side with its client certificate (SSL).\n"
            + yaml.safe_dump(profile_dict(sb, source_mechanism="OAUTHBEARER", target_mechanism="SSL"), sort_keys=False)
        )
    if sb.corp:
        profiles["profile-corp.yaml"] = (
            head
            + "# The mirror is mirror@CORP.TEST, a realm both clusters trust.\n"
            + yaml.safe_dump(corp_profile_dict(sb), sort_keys=False)
        )
    if sb.hadoop() is not None:
        for mode in ("client", "cluster"):
            profiles[f"profile-yarn-{mode}.yaml"] = (
                head + f"# The mirror runs on the sandbox's YARN ({mode} mode) "
                "and checkpoints to its HDFS, both kerberized.\n"
                + yaml.safe_dump(yarn_profile_dict(sb, mode), sort_keys=False)
            )
        profiles["profile-yarn-token.yaml"] = (
            head + "# The mirror runs on the sandbox's YARN (client mode), its executors logged in with Kafka "
            "delegation tokens the driver obtains for each side: no keytab ships to a container.\n"
            + yaml.safe_dump(yarn_profile_dict(sb, "client", "delegation_token"), sort_keys=False)
        )
    return profiles
