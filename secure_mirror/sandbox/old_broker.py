"""An optional HDP-era source cluster for the sandbox: Kafka 2.2.2 with ZooKeeper, SASL_PLAINTEXT and GSSAPI as in
the seeds' Kerberos recipe, ACLs through its SimpleAclAuthorizer.

It joins a running sandbox: same KDC and realm as the source side, same broker principal and host name
(``kafka/kafka.source.test``), its own ports, folder (``old-broker/``) and state file, which ``sandbox down``
and ``status`` read. Kafka 2.2 is the oldest line chosen here: before 2.3 brokers report no authorized operations,
before 2.8 the idempotent producer needs IDEMPOTENT_WRITE on the cluster. On Java 17 it needs ZooKeeper 3.5's
client (jvm/kafka-old/pom.xml) and access to the JDK's Kerberos configuration for its DEFAULT name rule.

With ``ranger`` (``sandbox up --old-broker --old-broker-ranger POLICIES``) it authorizes with Apache Ranger's Kafka
authorizer of the same era instead, from a policy cache (sandbox/ranger.py).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.kafka.identity import KafkaIdentity
from secure_mirror.profile.cluster import Cluster
from secure_mirror.sandbox import procs, ranger
from secure_mirror.sandbox.kafka import ONE_BROKER_SETTINGS, BrokerAddress
from secure_mirror.sandbox.ranger import RANGER_AUTHORIZER, RANGER_VERSION, RangerPolicyCache

FOLDER = "old-broker"
PROFILE = "profile-old-source.yaml"  # the sandbox's profile with this broker as the source
STATE = "state.json"
VERSION = "2.2.2"
LOG4J = """log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={log}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.authorizer.logger=WARN
"""
# Kafka 2.2 reads the default realm from sun.security.krb5.Config by reflection (DEFAULT name rule).
JAVA_OPENS = "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED"


@dataclass
class OldBroker(BrokerAddress):
    base: Path  # <sandbox>/old-broker
    host: str
    realm: str
    port: int
    zookeeper_port: int
    keytab: Path  # the source broker's keytab: the same service principal
    krb5_conf: Path
    ranger: RangerPolicyCache | None = None  # authorize with Ranger's Kafka authorizer, these policies

    def _java(self, main: str, *args: str, heap: str, extra: tuple[str, ...] = ()) -> list[str]:
        return [
            paths.java_executable(),
            heap,
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            *extra,
            f"-Dlog4j.configuration=file:{self.base / 'log4j.properties'}",
            "-cp",
            self._classpath(),
            main,
            *args,
        ]

    def _classpath(self) -> str:
        entries = [str(paths.kafka_old_lib_dir() / "*")]
        if self.ranger is not None:  # ranger-kafka-security.xml and ranger-kafka-audit.xml are found on it
            entries += [str(self.base / "ranger"), str(paths.ranger_kafka_lib_dir() / "*")]
        return ":".join(entries)

    def write_ranger(self) -> None:
        """The plugin's configuration and its policy cache (written again before each start)."""
        assert self.ranger is not None
        ranger.write_plugin(self.base / "ranger", self.ranger)

    def write_config(self) -> None:
        for folder in ("zookeeper", "data", "logs"):
            (self.base / folder).mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.base / "zookeeper.properties").write_text(
            f"dataDir={self.base / 'zookeeper'}\nclientPort={self.zookeeper_port}\nclientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
        )
        (self.base / "jaas.conf").write_text(
            "KafkaServer {\n  com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true\n"
            f'  useTicketCache=false keyTab="{self.keytab}" principal="{self.principal}";\n}};\n'
        )
        props = {
            "broker.id": "1",
            "listeners": f"SASL_PLAINTEXT://{self.bootstrap}",
            "advertised.listeners": f"SASL_PLAINTEXT://{self.bootstrap}",
            "security.inter.broker.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism.inter.broker.protocol": "GSSAPI",
            "sasl.enabled.mechanisms": "GSSAPI",
            "sasl.kerberos.service.name": "kafka",
            "zookeeper.connect": f"127.0.0.1:{self.zookeeper_port}",
            "log.dirs": str(self.base / "data"),
            "authorizer.class.name": RANGER_AUTHORIZER if self.ranger else "kafka.security.auth.SimpleAclAuthorizer",
            "allow.everyone.if.no.acl.found": "false",
            "super.users": "User:kafka;User:admin",
            **ONE_BROKER_SETTINGS,
        }
        path = self.base / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        path.chmod(0o600)
        (self.base / "log4j.properties").write_text(LOG4J.format(log=self.base / "logs" / "server.log"))
        if self.ranger is not None:
            if not any(paths.ranger_kafka_lib_dir().glob(f"ranger-kafka-plugin-{RANGER_VERSION}.jar")):
                raise EnvironmentNotReady(
                    f"Ranger's Kafka plugin {RANGER_VERSION} is missing from {paths.ranger_kafka_lib_dir()}; "
                    "run scripts/setup"
                )
            self.write_ranger()

    def start(self, timeout: float = 120.0) -> dict[str, int]:
        if not any(paths.kafka_old_lib_dir().glob(f"kafka_2.12-{VERSION}.jar")):
            raise EnvironmentNotReady(
                f"the Kafka {VERSION} jars are missing from {paths.kafka_old_lib_dir()}; run scripts/setup"
            )
        self.write_config()
        zookeeper = procs.start(
            self._java(
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                str(self.base / "zookeeper.properties"),
                heap="-Xmx128m",
            ),
            env={"PATH": "/usr/bin:/bin"},
            log=self.base / "logs" / "zookeeper.out",
        )
        pids = {"zookeeper": zookeeper.pid}
        self._save(pids)
        procs.wait_until(
            lambda: procs.tcp_open(self.zookeeper_port),
            what="the old broker's ZooKeeper",
            timeout=timeout,
            proc=zookeeper,
            log=self.base / "logs" / "zookeeper.out",
        )
        return self.start_broker(pids, timeout)

    def start_broker(self, pids: dict[str, int], timeout: float = 120.0) -> dict[str, int]:
        log = self.base / "logs" / "server.log"
        log.unlink(missing_ok=True)  # its "started" line is waited for
        broker = procs.start(
            self._java(
                "kafka.Kafka",
                str(self.base / "server.properties"),
                heap="-Xmx384m",
                extra=(
                    JAVA_OPENS,
                    "-Dzookeeper.sasl.client=false",
                    f"-Djava.security.krb5.conf={self.krb5_conf}",
                    f"-Djava.security.auth.login.config={self.base / 'jaas.conf'}",
                ),
            ),
            env={"PATH": "/usr/bin:/bin"},
            log=self.base / "logs" / "kafka.out",
        )
        pids["broker"] = broker.pid
        self._save(pids)
        procs.wait_until(
            lambda: log.exists() and "started (kafka.server.KafkaServer)" in log.read_text(errors="replace"),
            what=f"the Kafka {VERSION} broker",
            timeout=timeout,
            proc=broker,
            log=log,
        )
        return pids

    def _save(self, pids: dict[str, int]) -> None:
        (self.base / STATE).write_text(
            json.dumps(
                {
                    "port": self.port,
                    "zookeeper_port": self.zookeeper_port,
                    "bootstrap": self.bootstrap,
                    "version": VERSION,
                    "authorizer": f"Ranger {RANGER_VERSION}" if self.ranger else "SimpleAclAuthorizer",
                    "pids": pids,
                }
            )
        )


def start(sandbox, timeout: float = 120.0, ranger: RangerPolicyCache | None = None, folder: str = FOLDER) -> OldBroker:
    """Start the old broker beside a running sandbox (its source realm and broker identity); with ``ranger``,
    authorized by Ranger's Kafka authorizer with those policies. ``folder``: another one than the sandbox's own
    (a second old broker, which ``sandbox down`` does not know: stop it with ``stop(sandbox.base, folder)``)."""
    base = sandbox.base / folder
    if base.exists():
        stop(sandbox.base, folder)
        shutil.rmtree(base, ignore_errors=True)
    base.mkdir(mode=0o700)
    port, zookeeper_port = procs.free_ports(2)
    side = sandbox.sides["source"]
    broker = OldBroker(
        base,
        side.host,
        side.realm,
        port,
        zookeeper_port,
        sandbox.broker("source").keytab,  # the first broker's: its host and principal are side.host's
        sandbox.base / "source" / "krb5.conf",
        ranger,
    )
    try:
        broker.start(timeout)
    except BaseException:
        stop(sandbox.base, folder)
        raise
    if folder == FOLDER:
        write_profile(sandbox, broker)
    return broker


def reload_ranger(broker: OldBroker, ranger: RangerPolicyCache, timeout: float = 120.0) -> None:
    """Restart ``broker`` (not its ZooKeeper) with these Ranger policies: Ranger's plugin reads its policy cache only
    at its start when no Ranger Admin answers."""
    found = state(broker.base.parent, broker.base.name)
    if found is None or broker.ranger is None:
        raise EnvironmentNotReady(f"no old broker authorized by Ranger in {broker.base}")
    procs.stop_pid(found["pids"]["broker"], expect_in_cmdline="kafka.Kafka")
    ranger.version = broker.ranger.version + 1
    broker.ranger = ranger
    broker.write_ranger()
    broker.start_broker({"zookeeper": found["pids"]["zookeeper"]}, timeout)


def profile_dict(sandbox, bootstrap: str, ranger_service: str | None = None) -> dict:
    """The sandbox's profile with the old broker as the source: SASL_PLAINTEXT, GSSAPI, the source's mirror; with
    ``ranger_service``, its grants rendered as Ranger policies of that service (acls.format: ranger)."""
    import yaml

    data = yaml.safe_load(sandbox.profile_path.read_text())
    source = data["source"]
    source.update({"alias": "old", "bootstrap_servers": [bootstrap], "security_protocol": "SASL_PLAINTEXT"})
    source.pop("tls", None)
    if ranger_service is not None:
        source["acls"] = {"format": "ranger", "ranger_service": ranger_service}
    data["mirror"]["checkpoint_location"] = str(sandbox.base / "checkpoints-old-source")
    return data


def write_profile(sandbox, broker: OldBroker) -> None:
    import yaml

    service = broker.ranger.service if broker.ranger is not None else None
    head = (
        "# Written by `secure-mirror sandbox up --old-broker`: the source is the Kafka "
        f"{VERSION} broker (SASL_PLAINTEXT, GSSAPI{', authorized by Ranger' if service else ''}).\n"
    )
    data = profile_dict(sandbox, broker.bootstrap, service)
    (sandbox.base / PROFILE).write_text(head + yaml.safe_dump(data, sort_keys=False))


def state(sandbox_base: Path, folder: str = FOLDER) -> dict | None:
    path = Path(sandbox_base) / folder / STATE
    return json.loads(path.read_text()) if path.exists() else None


def summary(sandbox_base: Path) -> dict | None:
    """What ``sandbox status`` shows of the old broker, or None when the sandbox has none."""
    if (found := state(sandbox_base)) is None:
        return None
    return {
        "bootstrap": found["bootstrap"],
        "version": found["version"],
        "authorizer": found.get("authorizer", "SimpleAclAuthorizer"),
        "profile": str(Path(sandbox_base) / PROFILE),
    }


def stop(sandbox_base: Path, folder: str = FOLDER) -> None:
    """Stop the old broker and its ZooKeeper, if the sandbox has them; the sandbox no longer lists them (its
    status would show them dead), their data folder stays."""
    found = state(sandbox_base, folder)
    if found is None:
        return
    for name, needle in (("broker", "kafka.Kafka"), ("zookeeper", "QuorumPeerMain")):
        if pid := found["pids"].get(name):
            procs.stop_pid(pid, expect_in_cmdline=needle)
    (Path(sandbox_base) / folder / STATE).unlink(missing_ok=True)


def identity(sandbox, who: str = "admin", folder: str = FOLDER) -> KafkaIdentity:
    """``who`` (admin or mirror) on the old broker, built as a profile side is."""
    found = state(sandbox.base, folder)
    if found is None:
        raise EnvironmentNotReady(f"no old broker in {sandbox.base}; start it with `sandbox up --old-broker`")
    side = sandbox.sides["source"]
    cluster = profile_dict(sandbox, found["bootstrap"])["source"]
    cluster["sasl"].update(
        {
            "principal": side.mirror_principal if who == "mirror" else side.admin_principal,
            "keytab": str(sandbox.keytab("source", who)),
        }
    )
    name = f"old-{who}" if folder == FOLDER else f"{folder}-{who}"
    return sandbox.identity_folder().identity(Cluster.model_validate(cluster), "source", name)
