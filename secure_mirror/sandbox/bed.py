"""The sandbox: one MIT KDC serving SOURCE.TEST and TARGET.TEST, a TLS CA, and two kerberized KRaft Kafka
clusters, all on loopback, all under one folder. ``Sandbox.up`` starts it and writes a ready profile;
``Sandbox.load`` finds a running one; ``down`` stops only the processes it started, by pid."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from secure_mirror import folders, paths
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.identities import IdentityFolder
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.identity import ClientConf, KafkaIdentity
from secure_mirror.profile.cluster import Cluster
from secure_mirror.sandbox import hadoop, oidc, old_broker, procs
from secure_mirror.sandbox.hadoop import SandboxHadoop
from secure_mirror.sandbox.kafka import Broker
from secure_mirror.sandbox.kdc import (
    CORP_DOMAIN,
    CORP_MIRROR,
    CORP_REALM,
    CORP_RULES,
    KDC,
    KDC_BINARIES,
    SandboxRealm,
    find_binary,
)
from secure_mirror.sandbox.profile import cluster_dict, sandbox_profiles
from secure_mirror.sandbox.tls import CertificateAuthority

STATE = "state.json"
PORTS = 13  # 2 KDC ports, 3 per broker, the corporate KDC, an SSL listener per broker, the identity provider (2)
SIDES = ("source", "target")


@dataclass(frozen=True)
class Side:
    """The facts of one cluster of the sandbox, as clients need them."""

    name: str
    realm: str
    domain: str
    port: int
    controller_port: int
    plaintext_port: int
    ssl_port: int | None = None  # the SSL listener with client certificates (a sandbox from before it has none)

    @property
    def host(self) -> str:
        return f"kafka.{self.domain}"

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def ssl_bootstrap(self) -> str:
        return f"{self.host}:{self.ssl_port}"

    @property
    def mirror_principal(self) -> str:
        return f"mirror/mirror.{self.domain}@{self.realm}"

    @property
    def admin_principal(self) -> str:
        return f"admin@{self.realm}"


def _check_dependencies() -> None:
    for name in KDC_BINARIES:
        find_binary(name)
    if not any(paths.kafka_lib_dir().glob("kafka_2.13-*.jar")):
        raise EnvironmentNotReady(f"the Kafka broker jars are missing from {paths.kafka_lib_dir()}; run scripts/setup")
    if not shutil.which(paths.java_executable()):
        raise EnvironmentNotReady("Java is missing; install Java 17 (openjdk-17-jdk-headless)")


def _write_secret(path: Path) -> None:
    """A random secret in a new 0600 file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_urlsafe(24))


def _check_hosts(sides: list[Side]) -> None:
    for side in sides:
        try:
            addr = socket.gethostbyname(side.host)
        except OSError:
            addr = None
        if addr is None or not addr.startswith("127."):
            raise EnvironmentNotReady(
                f"the host name {side.host} does not resolve to loopback; run scripts/setup, which adds "
                "the sandbox's host names to /etc/hosts"
            )


class Sandbox:
    def __init__(self, base: Path, state: dict):
        self.base = Path(base).resolve()
        self.state = state
        self.sides = {s["name"]: Side(**s) for s in state["sides"]}

    # ---- paths -------------------------------------------------------------------------------------
    @property
    def krb5_conf(self) -> Path:
        return self.base / "krb5.conf"

    @property
    def ca_file(self) -> Path:
        return self.base / "tls" / "ca.pem"

    @property
    def ca_key_file(self) -> Path:
        return self.base / "tls" / "ca.key"

    @property
    def wrong_ca_file(self) -> Path:
        return self.base / "tls" / "other-ca.pem"

    @property
    def profile_path(self) -> Path:
        return self.base / "profile.yaml"

    def keytab(self, side: str, who: str) -> Path:
        return self.base / side / f"{who}.keytab"

    def scram_password_file(self, side: str) -> Path:
        """The mirror's password on ``side`` for SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN alike."""
        return self.base / "secrets" / f"{side}-mirror.scram-password"

    @property
    def oauth(self) -> bool:
        """Whether this sandbox runs the identity provider (one started before it existed does not)."""
        return "oidc_port" in self.state

    @property
    def token_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.state['oidc_port']}{oidc.TOKEN_PATH}"

    @property
    def https_token_endpoint(self) -> str | None:
        """The same token endpoint over HTTPS (a certificate of the sandbox's CA), or None in an older sandbox."""
        port = self.state.get("oidc_tls_port")
        return f"https://{oidc.IDP_HOST}:{port}{oidc.TOKEN_PATH}" if port else None

    @property
    def oauth_secret_file(self) -> Path:
        """The client secret of the mirror's OAuth client (client id ``mirror``)."""
        return self.base / "secrets" / "oauth-mirror.secret"

    def client_pair(self, side: str) -> tuple[Path, Path]:
        """The mirror's client certificate (subject CN=mirror.<domain>) and key for the SSL listener."""
        return self.base / side / "mirror-client.pem", self.base / side / "mirror-client.key"

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
    ) -> Sandbox:
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
        ports = cls._ports(port_base)
        sides = [
            Side("source", "SOURCE.TEST", "source.test", ports[2], ports[3], ports[4], ports[9]),
            Side("target", "TARGET.TEST", "target.test", ports[5], ports[6], ports[7], ports[10]),
        ]
        _check_dependencies()
        if with_hadoop:
            hadoop.check_dependencies()
        _check_hosts(sides)
        state = {
            "sides": [s.__dict__ for s in sides],
            "kdc_ports": ports[:2],
            "corp_kdc_port": ports[8],
            "oidc_port": ports[11],
            "oidc_tls_port": ports[12],
            "pids": {},
            "ticket_lifetime": ticket_lifetime,
            "plaintext": plaintext,
        }
        if with_hadoop:
            state["hadoop"] = hadoop.new_state()
        folders.make(base, "--dir")
        sandbox = cls(base, state)
        try:
            sandbox._start()
        except BaseException:
            sandbox.down()
            raise
        return sandbox

    @staticmethod
    def _ports(port_base: int | None) -> list[int]:
        if port_base is None:
            return procs.free_ports(PORTS)
        ports = list(range(port_base, port_base + PORTS))
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

    def _save(self) -> None:
        tmp = self.base / (STATE + ".tmp")
        tmp.write_text(json.dumps(self.state, indent=2))
        tmp.replace(self.base / STATE)

    @property
    def corp(self) -> bool:
        """Whether this sandbox has the corporate realm (a sandbox started before it existed has not)."""
        return "corp_kdc_port" in self.state

    def kdc(self) -> KDC:
        realms = [
            SandboxRealm(s.realm, port, [s.domain]) for s, port in zip(self.sides.values(), self.state["kdc_ports"])
        ]
        if self.corp:
            realms.append(SandboxRealm(CORP_REALM, self.state["corp_kdc_port"], [CORP_DOMAIN]))
        return KDC(self.base / "kdc", realms, max_life=self.state["ticket_lifetime"], pid=self.state["pids"].get("kdc"))

    def broker(self, side: str) -> Broker:
        s = self.sides[side]
        return Broker(
            name=side,
            base=self.base / side,
            host=s.host,
            realm=s.realm,
            port=s.port,
            controller_port=s.controller_port,
            krb5_conf=self.base / side / "krb5.conf",
            keytab=self.keytab(side, "broker"),
            keystore=self.base / side / "broker-keystore.pem",
            ca_file=self.ca_file,
            super_users=["User:kafka", "User:admin"],
            plaintext_port=s.plaintext_port if self.state["plaintext"] else None,
            pid=self.state["pids"].get(side),
            principal_to_local_rules=CORP_RULES if self.corp else (),
            ssl_port=s.ssl_port,
            plain_password_file=self.scram_password_file(side) if s.ssl_port else None,
            jwks_url=f"http://127.0.0.1:{self.state['oidc_port']}{oidc.JWKS_PATH}" if self.oauth else None,
        )

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
        brokers = [self.broker(side) for side in SIDES]
        for broker in brokers:
            broker.format_storage()
        for broker in brokers:
            broker.start()
            self.state["pids"][broker.name] = broker.pid
            self._save()
        for side in SIDES:
            for mechanism in ("SCRAM-SHA-512", "SCRAM-SHA-256"):
                self.admin(side, admin_ops.upsert_scram_user, "mirror", str(self.scram_password_file(side)), mechanism)
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
        hadoop.write_client_conf(cluster)
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
        _write_secret(self.oauth_secret_file)
        port = self.state["oidc_port"]
        proc = oidc.launch(folder, {"mirror": self.oauth_secret_file}, port, self.state.get("oidc_tls_port"))
        self.state["pids"]["oidc"] = proc.pid  # saved before the wait: `down` stops it if it never serves
        self._save()
        oidc.wait_ready(proc, folder, port, timeout)

    def _make_tls(self) -> None:
        (self.base / "tls").mkdir(exist_ok=True)
        ca = CertificateAuthority()
        ca.write_ca(self.ca_file)
        ca.write_key(self.ca_key_file)  # 0600: the Hadoop daemons' certificate may be issued later (start_hadoop)
        CertificateAuthority("an unrelated CA").write_ca(self.wrong_ca_file)
        (self.base / "oidc").mkdir(exist_ok=True, mode=0o700)
        ca.write_server_keystore(self.base / "oidc" / "server.pem", [oidc.IDP_HOST])
        for side, s in self.sides.items():
            (self.base / side).mkdir(exist_ok=True, mode=0o700)
            ca.write_server_keystore(self.base / side / "broker-keystore.pem", [s.host])
            ca.write_client_pair(
                self.base / side / "mirror-client.pem", self.base / side / "mirror-client.key", f"mirror.{s.domain}"
            )

    def _make_identities(self, kdc: KDC, side: str) -> None:
        s = self.sides[side]
        kdc.add_principal(f"kafka/{s.host}@{s.realm}", self.keytab(side, "broker"))
        kdc.add_principal(s.mirror_principal, self.keytab(side, "mirror"))
        kdc.add_principal(s.admin_principal, self.keytab(side, "admin"))
        kdc.write_krb5_conf(self.base / side / "krb5.conf", default_realm=s.realm)  # the broker's: its own realm
        _write_secret(self.scram_password_file(side))

    def corp_keytab(self) -> Path:
        return self.base / "corp" / "mirror.keytab"

    def _make_corp_identity(self, kdc: KDC) -> None:
        """mirror@CORP.TEST, and the trust of each side's realm in CORP.TEST: the same cross-realm key
        krbtgt/<side realm>@CORP.TEST in both databases (same name, so same salt; a random password, which only
        kadmin.local's arguments see, on this throwaway KDC)."""
        (self.base / "corp").mkdir(exist_ok=True, mode=0o700)
        for s in self.sides.values():
            query = f"addprinc -pw {secrets.token_urlsafe(24)} krbtgt/{s.realm}@{CORP_REALM}"
            kdc.kadmin(CORP_REALM, query)
            kdc.kadmin(s.realm, query)
        kdc.add_principal(CORP_MIRROR, self.corp_keytab())

    def start_broker(self, side: str, timeout: float = 120.0) -> None:
        """Start a broker again after ``broker(side).stop()`` (its data is kept) and record its new pid."""
        broker = self.broker(side)
        broker.start(timeout)
        self.state["pids"][side] = broker.pid
        self._save()

    def restart_broker(
        self, side: str, *, hard: bool = False, down_seconds: float = 0.0, timeout: float = 120.0
    ) -> None:
        """Stop a broker (SIGTERM, or SIGKILL when ``hard``), leave it down ``down_seconds``, then start it again
        on the same ports with the same data and wait until it serves; ``state["pids"]`` follows."""
        self.broker(side).stop(hard=hard)
        time.sleep(down_seconds)
        self.start_broker(side, timeout)

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
        pids = dict(self.state["pids"])
        if (old := old_broker.state(self.base)) is not None:
            pids.update({f"old-{name}": pid for name, pid in old["pids"].items()})
        if (cluster := self.hadoop()) is not None:
            pids.update({f"hadoop-{name}": pid for name, pid in cluster.state["pids"].items()})
        return {name: procs.pid_alive(pid) for name, pid in pids.items() if pid}

    def down(self) -> None:
        old_broker.stop(self.base)
        if (cluster := self.hadoop()) is not None:
            cluster.stop()
        for side in SIDES:
            if self.state["pids"].get(side):
                self.broker(side).stop()
        if self.state["pids"].get("kdc"):
            self.kdc().stop()
        if self.state["pids"].get("oidc"):
            procs.stop_pid(self.state["pids"]["oidc"], expect_in_cmdline="secure_mirror.sandbox.oidc")
        shutil.rmtree(self.base, ignore_errors=True)

    # ---- clients -----------------------------------------------------------------------------------
    def identity(self, side: str, who: str = "mirror", *, mechanism: str = "GSSAPI") -> KafkaIdentity:
        """``who`` (mirror or admin) on ``side``, built as a profile side is (render's librdkafka settings)."""
        cluster = Cluster.model_validate(cluster_dict(self, side, f"sandbox-{side}", mechanism, who))
        return self.identity_folder().identity(cluster, side, who)

    def identity_folder(self) -> IdentityFolder:
        """This process's private folder of the sandbox's identities (the sandbox's krb5.conf; a credential cache
        each); kept with the sandbox, whose other users (test processes) have folders of their own."""
        return IdentityFolder(lambda _folder: str(self.krb5_conf), path=self.base / "ccache" / str(os.getpid()))

    def client_conf(self, side: str, who: str = "mirror", *, mechanism: str = "GSSAPI") -> ClientConf:
        """A librdkafka config for ``who`` (mirror or admin) on ``side``."""
        return self.identity(side, who, mechanism=mechanism).conf

    def identity_env(self, side: str, who: str) -> dict[str, str]:
        return self.identity(side, who).env()

    def admin(self, side: str, fn, *args, **kwargs):
        """Call an ``admin_ops`` function as the cluster's admin principal (a super user)."""
        return self.identity(side, "admin").call(fn, *args, **kwargs)

    def as_mirror(self, side: str, fn, *args, **kwargs):
        """Call an ``admin_ops`` function as the mirroring principal (subject to ACLs)."""
        return self.identity(side, "mirror").call(fn, *args, **kwargs)

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
                }
                for side, s in self.sides.items()
            },
            "processes": self.alive(),
            **({"hadoop": hadoop.summary(cluster)} if (cluster := self.hadoop()) is not None else {}),
            **({"old_broker": old} if (old := old_broker.summary(self.base)) is not None else {}),
        }
