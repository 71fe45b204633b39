"""A KRaft Kafka broker of the sandbox (broker and controller in one JVM: one such node is a cluster, or N of them
are, N voters of one controller quorum) with SASL_SSL (GSSAPI, SCRAM-SHA-512, SCRAM-SHA-256, PLAIN and, with an
identity provider, OAUTHBEARER), an SSL listener requiring client certificates, and ACLs enforced by the
StandardAuthorizer."""

from __future__ import annotations

import base64
import re
import secrets
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.render.encoders import properties_value
from secure_mirror.render.java_properties import OAUTH_ALLOWED_URLS
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.nodes import Endpoint

BROKER_HEAP = "-Xmx512m"
# A broker of `sandbox up --brokers 3` keeps the same heap. Measured on this project's machine (2 CPUs, 24 GiB) with
# ps during tests/integration/test_three_brokers.py (an exactly_once mirror of 300 records, a broker stopped and
# started): each broker JVM's resident set peaked at 390-515 MiB (six of them: about 2.7 GiB), the mirror job's
# spark-submit JVM at 490 MiB, the KDC at a few MiB; idle, a broker takes about 3% of one CPU. Two three-broker
# clusters, the KDC and a mirror job fit in under 4 GiB, beside the single-broker sandbox of the same test session.
MULTI_BROKER_HEAP = BROKER_HEAP
LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.authorizer.name = kafka.authorizer.logger
logger.authorizer.level = WARN
"""


def _krb5_login(keytab: Path, principal: str) -> str:
    return (
        "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
        f'useTicketCache=false keyTab="{keytab}" principal="{principal}";'
    )


RULES_KEY = "sasl.kerberos.principal.to.local.rules"
SSL_RULES_KEY = "ssl.principal.mapping.rules"
ESCAPED_KEYS = (RULES_KEY, SSL_RULES_KEY)  # their regexes hold '\\', which .properties reads as an escape
# A client certificate's subject CN=mirror.<domain> is the Kafka principal User:mirror, as the mirror's other logins.
SSL_PRINCIPAL_RULES = ("RULE:^CN=([a-z]+)\\..*$/$1/", "DEFAULT")
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
OAUTH_LOGIN = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
OAUTH_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
PLAIN_USERS = "user_mirror"  # the PLAIN user the broker knows (its password is the SCRAM mirror's)
# Delegation tokens (KRaft: since Kafka 3.6, over a listener with SCRAM): short-lived in the sandbox, so a run shows
# Spark obtaining new ones; expired tokens are removed every few seconds, so an old one really stops working. 30 s,
# renewed at half a lifetime (sandbox/profile.py): a new token reaches a loaded machine's executors in the 15 s before
# the old one ends (20 s left 10 s, and one run at a load average near 80 had a connection opened with an expired one).
TOKEN_EXPIRY_MS = 30_000
TOKEN_CHECK_MS = 5_000


# What a cluster of one broker needs (its internal topics on the one broker; nothing created by a client's
# request; a group's first member not kept waiting), for this broker and the old one.
ONE_BROKER_SETTINGS = {
    "auto.create.topics.enable": "false",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
}


def cluster_settings(brokers: int) -> dict[str, str]:
    """The replication settings of a cluster of ``brokers`` brokers: ONE_BROKER_SETTINGS for one; for three (or
    more) what production runs, replication factor 3 and ``min.insync.replicas`` 2 for new topics (the mirror's
    target topics take the brokers' defaults), the consumer offsets and the transaction state log."""
    if brokers == 1:
        return dict(ONE_BROKER_SETTINGS)
    factor = min(brokers, 3)
    in_sync = str(max(factor - 1, 1))
    return {
        **ONE_BROKER_SETTINGS,
        "offsets.topic.replication.factor": str(factor),
        "transaction.state.log.replication.factor": str(factor),
        "transaction.state.log.min.isr": in_sync,
        "transaction.state.log.num.partitions": "10",  # Kafka's 50, times 3 replicas, is load on a 2-CPU machine
        "default.replication.factor": str(factor),
        "min.insync.replicas": in_sync,
    }


class BrokerAddress(Endpoint):
    """Where clients reach a sandbox broker, and the service principal it logs in as (``host``, ``realm`` and
    ``port`` are the subclass's fields or properties)."""

    realm: str

    @property
    def principal(self) -> str:
        return f"kafka/{self.host}@{self.realm}"


@dataclass
class Broker(BrokerAddress):
    """One broker of a cluster of the sandbox (with the defaults, a cluster of this broker alone). ``host`` must
    resolve to 127.0.0.1 and map to ``realm``."""

    name: str
    base: Path
    host: str
    realm: str
    port: int
    controller_port: int
    krb5_conf: Path
    keytab: Path
    keystore: Path
    ca_file: Path
    super_users: list[str]
    plaintext_port: int | None = None
    pid: int | None = None
    principal_to_local_rules: tuple[str, ...] = ()  # empty: Kafka's default, DEFAULT
    ssl_port: int | None = None  # the SSL listener (client certificates required)
    plain_password_file: Path | None = None  # PLAIN's user mirror, with this password
    jwks_url: str | None = None  # OAUTHBEARER, validated against this identity provider's keys
    token_expiry_ms: int = TOKEN_EXPIRY_MS  # a delegation token's lifetime (and twice this its renewable maximum)
    node_id: int = 1
    voters: str | None = None  # controller.quorum.voters of a cluster of several brokers (None: this broker alone)
    settings: dict[str, str] = field(default_factory=lambda: dict(ONE_BROKER_SETTINGS))  # cluster_settings(N)
    token_key: Path | None = None  # the cluster's delegation token key (shared by its brokers); None: in ``base``
    heap: str = BROKER_HEAP
    reauth_ms: int | None = None  # connections.max.reauth.ms (KIP-368): clients authenticate again on live connections
    reauth_mechanisms: tuple[str, ...] | None = None  # only these mechanisms' connections (None: every one)
    wan_port: int | None = None  # the WAN listener (sandbox/wan.py): SASL_SSL as SECURE, for the proxied mirror
    wan_advertised_port: int | None = None  # what it advertises: its proxy's port on this broker's host name
    _proc: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def log(self) -> Path:
        return self.base / "logs" / "server.log"

    def _listeners(self) -> tuple[list[str], str]:
        listeners = [f"SECURE://{self.host}:{self.port}", f"CONTROLLER://{self.host}:{self.controller_port}"]
        protocols = "SECURE:SASL_SSL,CONTROLLER:SASL_SSL"
        if self.plaintext_port:
            listeners.append(f"PLAIN://{self.host}:{self.plaintext_port}")
            protocols += ",PLAIN:PLAINTEXT"
        if self.ssl_port:
            listeners.append(f"MTLS://{self.host}:{self.ssl_port}")
            protocols += ",MTLS:SSL"
        if self.wan_port:
            listeners.append(f"WAN://{self.host}:{self.wan_port}")
            protocols += ",WAN:SASL_SSL"
        return listeners, protocols

    def _advertised(self, listeners: list[str]) -> str:
        """Every listener but the controller's; the WAN listener at its proxy's port (the same host name)."""
        shown = [l for l in listeners if not l.startswith("CONTROLLER")]
        if self.wan_port and self.wan_advertised_port:
            shown = [f"WAN://{self.host}:{self.wan_advertised_port}" if l.startswith("WAN://") else l for l in shown]
        return ",".join(shown)

    def _properties(self) -> dict[str, str]:
        jaas = _krb5_login(self.keytab, self.principal)
        listeners, protocols = self._listeners()
        return (
            {
                "process.roles": "broker,controller",
                "node.id": str(self.node_id),
                "controller.quorum.voters": self.voters or f"{self.node_id}@{self.host}:{self.controller_port}",
                "listeners": ",".join(listeners),
                "advertised.listeners": self._advertised(listeners),
                "listener.security.protocol.map": protocols,
                "inter.broker.listener.name": "SECURE",
                "controller.listener.names": "CONTROLLER",
                "sasl.enabled.mechanisms": ",".join(self.mechanisms()),
                "listener.name.controller.sasl.enabled.mechanisms": "GSSAPI",
                "sasl.mechanism.inter.broker.protocol": "GSSAPI",
                "sasl.mechanism.controller.protocol": "GSSAPI",
                "sasl.kerberos.service.name": "kafka",
                "listener.name.secure.gssapi.sasl.jaas.config": jaas,
                "listener.name.controller.gssapi.sasl.jaas.config": jaas,
                "listener.name.secure.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN,
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow.everyone.if.no.acl.found": "false",
                "super.users": ";".join(self.super_users),
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(self.keystore),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(self.ca_file),
                "ssl.endpoint.identification.algorithm": "https",
                "ssl.client.auth": "requested",
                "listener.name.mtls.ssl.client.auth": "required",
                SSL_RULES_KEY: ",".join(SSL_PRINCIPAL_RULES),
                "log.dirs": str(self.base / "data"),
                "num.partitions": "1",
                **self.settings,
                "log.segment.bytes": str(64 * 1024 * 1024),
            }
            | ({RULES_KEY: ",".join(self.principal_to_local_rules)} if self.principal_to_local_rules else {})
            | self._password_mechanisms()
            | self._oauth()
            | self._delegation_tokens()
            | self._reauthentication()
        )

    def properties(self) -> dict[str, str]:
        """The broker's settings; the WAN listener, when it has one, is set as the client listener (SECURE) is."""
        settings = self._properties()
        if not self.wan_port:
            return settings
        secure = "listener.name.secure."
        return settings | {
            "listener.name.wan." + k[len(secure) :]: v for k, v in settings.items() if k.startswith(secure)
        }

    def _reauthentication(self) -> dict[str, str]:
        """KIP-368: a connection's session ends ``reauth_ms`` after it authenticated, or when its credential ends if
        sooner (a delegation token's expiry), unless its client authenticates again on it."""
        if not self.reauth_ms:
            return {}
        if self.reauth_mechanisms is None:
            return {"connections.max.reauth.ms": str(self.reauth_ms)}
        return {
            f"listener.name.secure.{m.lower()}.connections.max.reauth.ms": str(self.reauth_ms)
            for m in self.reauth_mechanisms
        }

    def _delegation_tokens(self) -> dict[str, str]:
        return {
            "delegation.token.secret.key": self._token_secret(),
            "delegation.token.expiry.time.ms": str(self.token_expiry_ms),
            "delegation.token.max.lifetime.ms": str(2 * self.token_expiry_ms),
            "delegation.token.expiry.check.interval.ms": str(TOKEN_CHECK_MS),
        }

    def _token_secret(self) -> str:
        """The key the brokers sign tokens with: made once per broker, kept (0600) so a restart keeps its tokens."""
        path = self.token_key or self.base / "delegation-token.key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(secrets.token_hex(32))
        return path.read_text()

    def mechanisms(self) -> list[str]:
        return (
            ["GSSAPI", "SCRAM-SHA-512", "SCRAM-SHA-256"]
            + (["PLAIN"] if self.plain_password_file else [])
            + (["OAUTHBEARER"] if self.jwks_url else [])
        )

    def _password_mechanisms(self) -> dict[str, str]:
        settings = {"listener.name.secure.scram-sha-256.sasl.jaas.config": SCRAM_LOGIN}
        if self.plain_password_file:
            password = self.plain_password_file.read_text().strip()  # token_urlsafe: no character JAAS would quote
            settings["listener.name.secure.plain.sasl.jaas.config"] = (
                f'org.apache.kafka.common.security.plain.PlainLoginModule required {PLAIN_USERS}="{password}";'
            )
        return settings

    def _oauth(self) -> dict[str, str]:
        if not self.jwks_url:
            return {}
        return {
            "listener.name.secure.oauthbearer.sasl.jaas.config": OAUTH_LOGIN,
            "listener.name.secure.oauthbearer.sasl.server.callback.handler.class": OAUTH_VALIDATOR,
            "sasl.oauthbearer.jwks.endpoint.url": self.jwks_url,
        }

    def write_config(self) -> Path:
        (self.base / "logs").mkdir(parents=True, exist_ok=True)
        path = self.base / "broker.properties"
        path.write_text(
            "".join(f"{k}={properties_value(v) if k in ESCAPED_KEYS else v}\n" for k, v in self.properties().items())
        )
        path.chmod(0o600)
        (self.base / "log4j2.properties").write_text(LOG4J2.format(log=self.log))
        return path

    def java(self, main: str, *args: str, heap: str = "-Xmx256m") -> list[str]:
        return [
            paths.java_executable(),
            heap,
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Djava.security.krb5.conf={self.krb5_conf}",
            *([f"-D{OAUTH_ALLOWED_URLS}={self.jwks_url}"] if self.jwks_url else []),
            f"-Dlog4j2.configurationFile={self.base / 'log4j2.properties'}",
            "-cp",
            paths.kafka_classpath(),
            main,
            *args,
        ]

    def format_storage(self, cluster_id: str | None = None) -> None:
        """Format the log folder for ``cluster_id`` (the same for every broker of a cluster; a new one if None)."""
        cluster_id = cluster_id or cluster_id_for_cli()
        config = self.write_config()
        res = subprocess.run(
            self.java("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(config)),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if res.returncode != 0:
            raise EnvironmentNotReady(
                f"formatting the {self.name} broker's storage failed: {(res.stderr or res.stdout).strip()[-2000:]}"
            )

    def start(self, timeout: float = 90.0) -> None:
        self.wait_ready(timeout, since=self.launch())

    def launch(self) -> int:
        """Start the JVM without waiting; returns where its log stood, for :meth:`wait_ready` (a broker of several
        waits for a majority of the quorum, so its peers are launched before any is waited for)."""
        for port in (self.port, self.controller_port, self.plaintext_port, self.ssl_port):
            if port and procs.port_in_use(port):
                raise EnvironmentNotReady(f"port {port} for the {self.name} broker is already in use")
        argv = self.java("kafka.Kafka", str(self.base / "broker.properties"), heap=self.heap)
        logged = len(procs.log_since(self.log))  # a restarted broker appends to the log of its previous life
        self._proc = procs.start(argv, env=procs.inherited_env("JAVA_HOME"), log=self.base / "logs" / "stdout.log")
        self.pid = self._proc.pid
        return logged

    def wait_ready(self, timeout: float = 90.0, since: int = 0) -> None:
        """Wait for the port and for "Kafka Server started" in the log after its first ``since`` characters."""

        def started() -> bool:
            return procs.tcp_open(self.port) and bool(
                re.search(r"Kafka Server started", procs.log_since(self.log)[since:])
            )

        log = self.log if procs.log_since(self.log).strip() else self.base / "logs" / "stdout.log"
        procs.wait_until(started, what=f"the {self.name} Kafka broker", timeout=timeout, proc=self._proc, log=log)

    def stop(self, hard: bool = False) -> None:
        if self.pid:
            if hard:
                procs.kill_pid(self.pid, expect_in_cmdline="kafka.Kafka")
            else:
                procs.stop_pid(self.pid, expect_in_cmdline="kafka.Kafka", timeout=60)


def cluster_id_for_cli() -> str:
    """A random KRaft cluster id that a command line reads as a value: one starting with '-' (about one in 32 of
    base64's alphabet) would be taken for an option ("argument --cluster-id/-t: expected one argument"). Kafka's own
    Uuid.randomUuid() skips those ids for the same reason."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id
