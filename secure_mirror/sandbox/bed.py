"""The sandbox: one MIT KDC serving SOURCE.TEST and TARGET.TEST, a TLS CA, and two kerberized KRaft Kafka
clusters, all on loopback, all under one folder. ``Sandbox.up`` starts it and writes a ready profile;
``Sandbox.load`` finds a running one; ``down`` stops only the processes it started, by pid."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from secure_mirror import folders, paths
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.kafka import admin_ops
from secure_mirror.sandbox import credstore, hadoop, oidc, old_broker, procs, wan
from secure_mirror.sandbox.brokers import BrokerControl
from secure_mirror.sandbox.clients import SandboxClients
from secure_mirror.sandbox.credentials import SandboxCredentials, write_secret
from secure_mirror.sandbox.hadoop import SandboxHadoop
from secure_mirror.sandbox.hadoop_config import write_client_conf
from secure_mirror.sandbox.kafka import BROKER_HEAP, MULTI_BROKER_HEAP, Broker, cluster_id_for_cli, cluster_settings
from secure_mirror.sandbox.kdc import (
    CORP_DOMAIN,
    CORP_REALM,
    CORP_RULES,
    KDC,
    KDC_BINARIES,
    SandboxRealm,
    find_binary,
)
from secure_mirror.sandbox.layout import STATE
from secure_mirror.sandbox.nodes import PORTS, Side, check_broker_count, check_hosts, ports_needed, sides_for
from secure_mirror.sandbox.profile import sandbox_profiles
from secure_mirror.sandbox.tls import CertificateAuthority
from secure_mirror.sandbox.wan import Link, SandboxWan

SIDES = ("source", "target")
START_TIMEOUT = 300.0  # seconds for a broker to serve (several JVMs start at once on two CPUs, often busy)


def _check_dependencies() -> None:
    for name in KDC_BINARIES:
        find_binary(name)
    if not any(paths.kafka_lib_dir().glob("kafka_2.13-*.jar")):
        raise EnvironmentNotReady(f"the Kafka broker jars are missing from {paths.kafka_lib_dir()}; run scripts/setup")
    if not shutil.which(paths.java_executable()):
        raise EnvironmentNotReady("Java is missing; install Java 17 (openjdk-17-jdk-headless)")


__all__ = ["PORTS", "SIDES", "STATE", "Sandbox", "Side"]


class Sandbox(BrokerControl, SandboxCredentials, SandboxClients, SandboxWan):
    """A sandbox: started (``up``) or found running (``load``), its daemons, its Hadoop and its profiles; where it
    keeps each thing is ``layout.SandboxLayout``'s, its clients ``clients.SandboxClients``' and the
    credentials it is started with ``credentials.SandboxCredentials``'."""

    # ---- lifecycle ---------------------------------------------------------------------------------
    @classmethod
    def up(
        cls,
        base: Path,
        *,
        ticket_lifetime: str = "10h",
        port_base: int | None = None,
        plaintext: bool = False,
        with_hadoop: bool = False,
        brokers: int = 1,
        reauth_ms: int | None = None,
        reauth_mechanisms: tuple[str, ...] | None = None,
        wan_link: Link | None = None,
    ) -> Sandbox:
        """Start a sandbox in ``base`` with ``brokers`` brokers a side (one: ``kafka.<domain>``; more: a controller
        quorum of them, ``kafka-<node id>.<domain>``, replication factor 3 and min.insync.replicas 2 from three).
        ``reauth_ms`` sets the brokers' ``connections.max.reauth.ms`` (KIP-368): every client (and broker) connection
        must authenticate again within that many milliseconds, with the credentials its client holds by then, and a
        delegation token's session ends when the token does; None, as Kafka's default, never. ``reauth_mechanisms``
        limits it to those mechanisms' connections on the client listener (None: every connection). Every source
        broker has a WAN listener (``wan.py``); ``wan_link`` starts its proxy with that link and points profile.yaml
        through it (``sandbox up --wan``); :meth:`start_wan` does so later."""
        check_broker_count(brokers)
        base = cls._cleared(base)
        ports = cls._ports(port_base, ports_needed(brokers) + wan.ports_needed(brokers))
        sides = sides_for(ports, brokers)
        _check_dependencies()
        if with_hadoop:
            hadoop.check_dependencies()
        check_hosts(sides)
        state = {
            "sides": [s.to_state() for s in sides],
            "kdc_ports": ports[:2],
            "corp_kdc_port": ports[8],
            "oidc_port": ports[11],
            "oidc_tls_port": ports[12],
            "pids": {},
            "ticket_lifetime": ticket_lifetime,
            "plaintext": plaintext,
            "reauth_ms": reauth_ms,
            "reauth_mechanisms": list(reauth_mechanisms) if reauth_mechanisms is not None else None,
            "wan": wan.new_state(ports[ports_needed(brokers) :], [n.node_id for n in sides[0].nodes]),
        }
        if with_hadoop:
            state["hadoop"] = hadoop.new_state()
        folders.make(base, "--dir")
        sandbox = cls(base, state)
        try:
            sandbox._start()
            if wan_link is not None:
                sandbox.start_wan(wan_link, profile=True)
        except BaseException:
            sandbox.down()
            raise
        return sandbox

    @classmethod
    def _cleared(cls, base: Path) -> Path:
        """``base`` resolved, once no sandbox runs there (a stopped one's leftovers are removed)."""
        folders.check_creatable(folders.named(base), "--dir")  # a symbolic link, dangling or not, is refused
        base = folders.named(base).resolve()  # the same folder: its last part is no link
        if (base / STATE).exists():
            running = cls.load(base)
            if running.alive():
                raise BadInputError(
                    f"a sandbox is already running in {base}; "
                    f"stop it with `secure-mirror sandbox down --dir {base}` first"
                )
            running.down()
        elif base.exists() and any(base.iterdir()):
            raise BadInputError(f"{base} exists and is not a sandbox folder; choose another --dir")
        return base

    @staticmethod
    def _ports(port_base: int | None, count: int = PORTS) -> list[int]:
        if port_base is None:
            return procs.free_ports(count)
        if port_base + count > 65536:
            raise BadInputError(f"--port-base {port_base} leaves no room for the {count} ports; choose a lower one")
        ports = list(range(port_base, port_base + count))
        busy = [p for p in ports if procs.port_in_use(p)]
        if busy:
            raise EnvironmentNotReady(f"port {busy[0]} is already in use; choose another --port-base")
        return ports

    @classmethod
    def load(cls, base: Path) -> Sandbox:
        path = Path(base).resolve() / STATE
        if not path.exists():
            raise BadInputError(f"no sandbox in {Path(base).resolve()}; start one with `secure-mirror sandbox up`")
        return cls(path.parent, json.loads(path.read_text()))

    def kdc(self) -> KDC:
        realms = [
            SandboxRealm(s.realm, port, [s.domain]) for s, port in zip(self.sides.values(), self.state["kdc_ports"])
        ]
        if self.corp:
            realms.append(SandboxRealm(CORP_REALM, self.state["corp_kdc_port"], [CORP_DOMAIN]))
        return KDC(self.base / "kdc", realms, max_life=self.state["ticket_lifetime"], pid=self.state["pids"].get("kdc"))

    def brokers(self, side: str) -> list[Broker]:
        """Every broker of ``side``, in node id order (one, or ``--brokers N``)."""
        return [self.broker(side, node.node_id) for node in self.sides[side].nodes]

    def broker(self, side: str, node_id: int = 1) -> Broker:
        """The broker ``node_id`` of ``side`` (the first, the only one with one broker a side)."""
        s = self.sides[side]
        node, many = s.node(node_id), len(s.nodes) > 1
        label = f"broker-{node_id}" if many else "broker"  # its keytab and keystore: <side>/<label>.keytab, ...
        return Broker(
            name=f"{side}-{node_id}" if many else side,
            base=self.base / side / label if many else self.base / side,
            host=node.host,
            realm=s.realm,
            port=node.port,
            controller_port=node.controller_port,
            krb5_conf=self.base / side / "krb5.conf",
            keytab=self.keytab(side, label),
            keystore=self.base / side / f"{label}-keystore.pem",
            ca_file=self.ca_file,
            super_users=["User:kafka", "User:admin"],
            plaintext_port=node.plaintext_port if self.state["plaintext"] else None,
            pid=self.state["pids"].get(self.pid_key(side, node_id)),
            principal_to_local_rules=CORP_RULES if self.corp else (),
            ssl_port=node.ssl_port,
            plain_password_file=self.scram_password_file(side) if node.ssl_port else None,
            jwks_url=f"http://127.0.0.1:{self.state['oidc_port']}{oidc.JWKS_PATH}" if self.oauth else None,
            node_id=node_id,
            voters=",".join(f"{n.node_id}@{n.host}:{n.controller_port}" for n in s.nodes) if many else None,
            settings=cluster_settings(len(s.nodes)),
            token_key=self.base / side / "delegation-token.key",
            heap=MULTI_BROKER_HEAP if many else BROKER_HEAP,
            reauth_ms=self.state.get("reauth_ms"),  # a sandbox started before the setting existed has none
            reauth_mechanisms=tuple(m) if (m := self.state.get("reauth_mechanisms")) is not None else None,
            wan_port=(wan_ports := self._wan_ports(side, node_id))[0],
            wan_advertised_port=wan_ports[1],
        )

    def _wan_ports(self, side: str, node_id: int) -> tuple[int | None, int | None]:
        """A source broker's WAN listener and its proxy's port (none on the target, or in a sandbox from before)."""
        found = self.state.get("wan", {}).get("brokers", {}).get(str(node_id)) if side == "source" else None
        return (found["listener"], found["proxy"]) if found else (None, None)

    def _start_clusters(self) -> None:
        """Format each side's brokers with one cluster id, launch them all, then wait for each: a broker of several
        is started only once a majority of its controller quorum runs."""
        launched = []
        ids = {side: cluster_id_for_cli() for side in SIDES}
        formats = [(broker, ids[side]) for side in SIDES for broker in self.brokers(side)]
        with ThreadPoolExecutor(max_workers=len(formats)) as pool:  # a JVM each, a few seconds
            list(pool.map(lambda pair: pair[0].format_storage(pair[1]), formats))
        for side in SIDES:
            for broker in self.brokers(side):
                launched.append((broker, broker.launch()))
                self.state["pids"][self.pid_key(side, broker.node_id)] = broker.pid
                self._save()  # before any wait: `down` stops what was launched if one never serves
        for broker, logged in launched:
            broker.wait_ready(START_TIMEOUT, since=logged)

    def _stop_brokers(self) -> None:
        """Stop every broker at once: one by one, the last of a controller quorum would wait for a majority that is
        gone (its controlled shutdown) until it is killed."""
        brokers = [broker for side in SIDES for broker in self.brokers(side) if broker.pid]
        with ThreadPoolExecutor(max_workers=max(len(brokers), 1)) as pool:
            list(pool.map(lambda broker: broker.stop(), brokers))

    def _start(self) -> None:
        kdc = self.kdc()
        kdc.create()
        kdc.start()
        self.state["pids"]["kdc"] = kdc.pid
        self._save()
        shutil.copy(kdc.krb5_conf, self.krb5_conf)
        self._make_tls()
        (self.base / "secrets").mkdir(mode=0o700, exist_ok=True)
        for side in SIDES:
            self._make_identities(kdc, side)
        self._make_corp_identity(kdc)
        self._start_identity_provider()
        self._start_clusters()
        for side in SIDES:
            for mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256"):
                self.admin(side, admin_ops.upsert_scram_user, "mirror", str(self.scram_password_file(side)), mechanism)
        credstore.make(self.base / "secrets", self.scram_password_file("target"))  # profile-jceks.yaml's
        if "hadoop" in self.state:
            self.start_hadoop()
        self.write_profiles()

    # annotated SandboxHadoop, not hadoop.SandboxHadoop: in the class body this method hides the module
    def hadoop(self) -> SandboxHadoop | None:
        """The kerberized HDFS and YARN of ``sandbox up --hadoop`` (None without it)."""
        return hadoop.hadoop(self)

    def start_hadoop(self) -> SandboxHadoop:
        """Start the kerberized Hadoop (at ``up --hadoop``, or beside a running sandbox), write its profiles."""
        if not self.ca_key_file.exists():
            raise EnvironmentNotReady(
                f"the sandbox in {self.base} predates Hadoop support (no CA key); start a new one"
            )
        hadoop.check_dependencies()
        if self.hadoop() is None or (self.base / hadoop.FOLDER).exists():
            self.stop_hadoop()
            self.state["hadoop"] = hadoop.new_state()
        cluster = self.hadoop()
        assert cluster is not None  # state["hadoop"] is set now
        cluster.base.mkdir(mode=0o700)
        cluster.make_identities(self.kdc())
        cluster.write_config(CertificateAuthority.load(self.ca_file, self.ca_key_file))
        write_client_conf(cluster)
        cluster.format()
        try:
            cluster.start()
        finally:
            self._save()
        cluster.prepare_home()
        self.write_profiles()
        return cluster

    def stop_hadoop(self) -> None:
        """Stop the Hadoop daemons and remove their folder (HDFS's data too); the principals stay in the KDC."""
        if (cluster := self.hadoop()) is not None:
            cluster.stop()
            shutil.rmtree(cluster.base, ignore_errors=True)
            del self.state["hadoop"]
            self._save()

    def _start_identity_provider(self, timeout: float = 30.0) -> None:
        folder = self.base / "oidc"
        folder.mkdir(exist_ok=True, mode=0o700)
        write_secret(self.oauth_secret_file)
        port = self.state["oidc_port"]
        proc = oidc.launch(folder, {"mirror": self.oauth_secret_file}, port, self.state.get("oidc_tls_port"))
        self.state["pids"]["oidc"] = proc.pid  # saved before the wait: `down` stops it if it never serves
        self._save()
        oidc.wait_ready(proc, folder, port, timeout)

    def stop_kdc(self) -> None:
        """A KDC outage: stop the KDC (its database stays); :meth:`start_kdc` brings it back on the same ports."""
        self.kdc().stop()
        self.state["pids"]["kdc"] = None
        self._save()

    def start_kdc(self, timeout: float = 30.0) -> None:
        """Start the KDC again after :meth:`stop_kdc` and record its new pid."""
        kdc = self.kdc()
        kdc.start(timeout)
        self.state["pids"]["kdc"] = kdc.pid
        self._save()

    def alive(self) -> dict[str, bool]:
        pids = dict(self.state["pids"]) | {"toxiproxy": self.state.get("wan", {}).get("pid")}
        if (old := old_broker.state(self.base)) is not None:
            pids.update({f"old-{name}": pid for name, pid in old["pids"].items()})
        if (cluster := self.hadoop()) is not None:
            pids.update({f"hadoop-{name}": pid for name, pid in cluster.state["pids"].items()})
        return {name: procs.pid_alive(pid) for name, pid in pids.items() if pid}

    def down(self) -> None:
        old_broker.stop(self.base)
        if (cluster := self.hadoop()) is not None:
            cluster.stop()
        self._stop_brokers()
        if "wan" in self.state:
            wan.Toxiproxy(self.base, self.state["wan"]).stop()
        if self.state["pids"].get("kdc"):
            self.kdc().stop()
        if self.state["pids"].get("oidc"):
            procs.stop_pid(self.state["pids"]["oidc"], expect_in_cmdline="secure_mirror.sandbox.oidc")
        shutil.rmtree(self.base, ignore_errors=True)

    # ---- the profile -------------------------------------------------------------------------------
    def write_profiles(self) -> None:
        for name, text in sandbox_profiles(self).items():
            (self.base / name).write_text(text)

    def summary(self) -> dict:
        return {
            "dir": str(self.base),
            "profile": str(self.profile_path),
            "krb5_conf": str(self.krb5_conf),
            "ca_file": str(self.ca_file),
            "kdc_ports": self.state["kdc_ports"],
            "clusters": {
                side: {
                    "bootstrap": s.bootstrap,
                    "realm": s.realm,
                    "mirror_principal": s.mirror_principal,
                    "mirror_keytab": str(self.keytab(side, "mirror")),
                    "admin_principal": s.admin_principal,
                    "admin_keytab": str(self.keytab(side, "admin")),
                    "brokers": [
                        {"node_id": b.node_id, "bootstrap": b.bootstrap, "principal": b.principal, "pid": b.pid}
                        for b in self.brokers(side)
                    ],
                }
                for side, s in self.sides.items()
            },
            "processes": self.alive(),
            **(
                {"wan": {"link": self.wan_link_text(), "source_bootstrap": self.wan_bootstrap_servers()}}
                if self.wan_link
                else {}
            ),
            **({"hadoop": hadoop.summary(cluster)} if (cluster := self.hadoop()) is not None else {}),
            **({"old_broker": old} if (old := old_broker.summary(self.base)) is not None else {}),
        }
