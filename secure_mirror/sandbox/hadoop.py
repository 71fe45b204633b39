"""An optional kerberized Hadoop for the sandbox (``sandbox up --hadoop``): HDFS (a NameNode and a DataNode) and
YARN (a ResourceManager and a NodeManager), Apache Hadoop 3.4.1 from Maven Central (jvm/hadoop/pom.xml: the
version of the hadoop-client jars pyspark 4.0.0 ships), each daemon a JVM of its own on loopback, on free ports,
under ``<sandbox>/hadoop``.

Security as a kerberized estate runs it, without root:
- ``hadoop.security.authentication=kerberos`` and service-level authorization; the service principals
  (``nn``, ``dn``, ``HTTP`` in ``hdfs.keytab``; ``rm``, ``nm`` in ``yarn.keytab``) live in SOURCE.TEST, the
  sandbox KDC's realm of the source side: the job runs beside its source cluster, and its source identity
  (``mirror/mirror.source.test``) is then a Hadoop user (``mirror``) with no cross-realm trust to set up.
  ``auth_to_local`` maps nn/dn to ``hdfs`` (the HDFS superuser) and rm/nm to ``yarn``.
- Encrypted, not only authenticated: ``hadoop.rpc.protection=privacy`` (YARN's RPC carries the containers'
  credentials: HDFS and Kafka delegation tokens, Spark's per-application secret) and a secure DataNode without
  privileged ports: SASL on data transfer with ``dfs.data.transfer.protection=privacy`` (blocks, such as a
  localized keytab, travel encrypted), block access tokens, and ``dfs.http.policy=HTTPS_ONLY`` with a certificate from the
  sandbox CA (a PKCS#12 keystore and truststore, their password in the 0600 ``ssl-*.xml`` of a 0700 folder).
- The NodeManager runs containers with the DefaultContainerExecutor: as the NodeManager's own OS user.
  LinuxContainerExecutor (containers as the submitting user) needs a root-owned setuid binary, which a
  sandbox started without root cannot have; a real estate uses it.

Memory: each daemon's heap is capped (``HEAPS``) and the NodeManager offers YARN ``NM_MEMORY_MB``, so the
sandbox fits a 2-CPU, 24 GiB machine beside the two brokers and a Spark job's containers.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.render.hadoop_conf import site_xml
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.kdc import KDC, find_binary
from secure_mirror.sandbox.tls import CertificateAuthority, ec_key

FOLDER = "hadoop"
HOST = "localhost"  # Hadoop's daemons bind and name their principals by this loopback name
USER = "mirror"  # the Hadoop user of the job's identity (mirror/mirror.source.test@SOURCE.TEST)
FIFO_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler"
HEAPS = {"namenode": "256m", "datanode": "192m", "resourcemanager": "384m", "nodemanager": "256m"}
NM_MEMORY_MB, NM_VCORES = 6144, 8  # what YARN may hand out (a Spark AM and two executors fit)
MAIN = {
    "namenode": "org.apache.hadoop.hdfs.server.namenode.NameNode",
    "datanode": "org.apache.hadoop.hdfs.server.datanode.DataNode",
    "resourcemanager": "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
    "nodemanager": "org.apache.hadoop.yarn.server.nodemanager.NodeManager",
}
# The log line each daemon writes once it serves (read from its log in <hadoop>/logs/<daemon>.log).
READY = {
    "namenode": "Leaving safe mode",
    "datanode": "Successfully sent block report",
    "resourcemanager": "Transitioned to active state",
    "nodemanager": "Registered with ResourceManager",
}
PORT_NAMES = (
    "nn_rpc",
    "nn_http",
    "nn_https",
    "dn_data",
    "dn_ipc",
    "dn_http",
    "dn_https",
    "rm",
    "rm_scheduler",
    "rm_tracker",
    "rm_admin",
    "rm_web",
    "rm_web_https",
    "nm",
    "nm_localizer",
    "nm_web",
)
WEBAPPS = ("hdfs", "datanode")  # the HDFS web servers' (empty) resource folders: no web pages, the endpoints only
JAVA_OPENS = tuple(
    f"--add-opens={m}=ALL-UNNAMED"
    for m in (
        "java.base/java.lang",
        "java.base/java.lang.reflect",
        "java.base/java.io",
        "java.base/java.net",
        "java.base/java.nio",
        "java.base/java.util",
        "java.base/java.util.concurrent",
        "java.base/sun.nio.ch",
        "java.security.jgss/sun.security.krb5",
    )
)
LOG4J = """log4j.rootLogger=INFO, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""


def lib_dir() -> Path:
    return paths.deps_dir() / "hadoop" / "lib"


@dataclass
class SandboxHadoop:
    """The four daemons' facts; ``state`` (ports, pids, start seconds) is kept in the sandbox's state.json."""

    base: Path  # <sandbox>/hadoop
    realm: str
    krb5_conf: Path
    state: dict

    # ---- names -------------------------------------------------------------------------------------
    def principal(self, service: str) -> str:
        return f"{service}/{HOST}@{self.realm}"

    def keytab(self, service: str) -> Path:
        return self.base / ("hdfs.keytab" if service in ("nn", "dn", "HTTP") else "yarn.keytab")

    @property
    def conf_dir(self) -> Path:
        return self.base / "conf"

    @property
    def ports(self) -> dict[str, int]:
        return self.state["ports"]

    @property
    def default_fs(self) -> str:
        return f"hdfs://{HOST}:{self.ports['nn_rpc']}"

    def address(self, name: str) -> str:
        return f"{HOST}:{self.ports[name]}"

    def log(self, daemon: str) -> Path:
        return self.base / "logs" / f"{daemon}.log"

    # ---- configuration -----------------------------------------------------------------------------
    def auth_to_local(self) -> str:
        realm = self.realm.replace(".", "\\.")
        rules = [
            f"RULE:[2:$1@$0]({svc}@{realm})s/.*/{user}/"
            for svc, user in (("nn", "hdfs"), ("dn", "hdfs"), ("rm", "yarn"), ("nm", "yarn"))
        ]
        return " ".join([*rules, "DEFAULT"])

    def client_properties(self) -> dict[str, dict[str, str]]:
        """What a client needs (per file): where HDFS and YARN are and which principals they run as."""
        return {
            "core-site.xml": {
                "fs.defaultFS": self.default_fs,
                "hadoop.security.authentication": "kerberos",
                "hadoop.security.authorization": "true",
                "hadoop.security.auth_to_local": self.auth_to_local(),
                "hadoop.rpc.protection": "privacy",
            },
            "hdfs-site.xml": {
                "dfs.namenode.rpc-address": self.address("nn_rpc"),
                "dfs.namenode.kerberos.principal": self.principal("nn"),
                "dfs.data.transfer.protection": "privacy",
                "dfs.http.policy": "HTTPS_ONLY",
                "dfs.namenode.https-address": self.address("nn_https"),
            },
            "yarn-site.xml": {
                "yarn.resourcemanager.address": self.address("rm"),
                "yarn.resourcemanager.scheduler.address": self.address("rm_scheduler"),
                "yarn.resourcemanager.resource-tracker.address": self.address("rm_tracker"),
                "yarn.resourcemanager.admin.address": self.address("rm_admin"),
                "yarn.resourcemanager.webapp.address": self.address("rm_web"),
                "yarn.resourcemanager.webapp.https.address": self.address("rm_web_https"),
                "yarn.resourcemanager.principal": self.principal("rm"),
                "yarn.nodemanager.principal": self.principal("nm"),
            },
        }

    def server_properties(self) -> dict[str, dict[str, str]]:
        """What the daemons read (per file): the clients' view, then each daemon's folders, keytabs and addresses,
        and the TLS stores of the HTTPS endpoints."""
        files = self.client_properties()
        files["hdfs-site.xml"].update(self._hdfs_server_properties())
        files["yarn-site.xml"].update(self._yarn_server_properties())
        return files | self._ssl_files()

    def _hdfs_server_properties(self) -> dict[str, str]:
        return {
            "dfs.replication": "1",
            "dfs.namenode.name.dir": str(self.base / "namenode"),
            "dfs.datanode.data.dir": str(self.base / "datanode"),
            "dfs.datanode.data.dir.perm": "700",
            "dfs.namenode.http-address": self.address("nn_http"),
            "dfs.namenode.safemode.extension": "0",
            "dfs.namenode.keytab.file": str(self.keytab("nn")),
            "dfs.datanode.kerberos.principal": self.principal("dn"),
            "dfs.datanode.keytab.file": str(self.keytab("dn")),
            "dfs.web.authentication.kerberos.principal": self.principal("HTTP"),
            "dfs.web.authentication.kerberos.keytab": str(self.keytab("HTTP")),
            "dfs.block.access.token.enable": "true",
            "dfs.datanode.address": self.address("dn_data"),
            "dfs.datanode.ipc.address": self.address("dn_ipc"),
            "dfs.datanode.http.address": self.address("dn_http"),
            "dfs.datanode.https.address": self.address("dn_https"),
            "dfs.datanode.hostname": HOST,
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.permissions.superusergroup": "supergroup",
        }

    def _yarn_server_properties(self) -> dict[str, str]:
        return {
            "yarn.resourcemanager.hostname": HOST,
            "yarn.resourcemanager.keytab": str(self.keytab("rm")),
            "yarn.resourcemanager.scheduler.class": FIFO_SCHEDULER,
            "yarn.scheduler.minimum-allocation-mb": "128",
            "yarn.scheduler.maximum-allocation-mb": str(NM_MEMORY_MB),
            "yarn.nodemanager.hostname": HOST,
            "yarn.nodemanager.address": self.address("nm"),
            "yarn.nodemanager.localizer.address": self.address("nm_localizer"),
            "yarn.nodemanager.webapp.address": self.address("nm_web"),
            "yarn.nodemanager.keytab": str(self.keytab("nm")),
            "yarn.nodemanager.container-executor.class": "org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor",
            "yarn.nodemanager.resource.memory-mb": str(NM_MEMORY_MB),
            "yarn.nodemanager.resource.cpu-vcores": str(NM_VCORES),
            "yarn.nodemanager.vmem-check-enabled": "false",
            "yarn.nodemanager.pmem-check-enabled": "false",
            "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99.9",
            "yarn.nodemanager.local-dirs": str(self.base / "nm-local"),
            "yarn.nodemanager.log-dirs": str(self.base / "nm-logs"),
            "yarn.nodemanager.delete.debug-delay-sec": "600",  # keeps container folders for inspection
            "yarn.nodemanager.env-whitelist": "JAVA_HOME,PATH,LANG,TZ",
            "yarn.log-aggregation-enable": "false",
        }

    def _ssl_files(self) -> dict[str, dict[str, str]]:
        password = self._store_password()
        return {
            "ssl-server.xml": {
                "ssl.server.keystore.location": str(self.base / "tls" / "keystore.p12"),
                "ssl.server.keystore.type": "pkcs12",
                "ssl.server.keystore.password": password,
                "ssl.server.keystore.keypassword": password,
                "ssl.server.truststore.location": str(self.truststore),
                "ssl.server.truststore.type": "pkcs12",
                "ssl.server.truststore.password": password,
            },
            "ssl-client.xml": {
                "ssl.client.truststore.location": str(self.truststore),
                "ssl.client.truststore.type": "pkcs12",
                "ssl.client.truststore.password": password,
            },
        }

    @property
    def truststore(self) -> Path:
        return self.base / "tls" / "truststore.p12"

    def _store_password(self) -> str:
        return (self.base / "tls" / "store.password").read_text().strip()

    def write_config(self, ca: CertificateAuthority) -> None:
        for folder in ("conf", "logs", "tls", "namenode", "datanode", "nm-local", "nm-logs"):
            (self.base / folder).mkdir(parents=True, exist_ok=True, mode=0o700)
        self._write_stores(ca)
        for name, properties in self.server_properties().items():
            path = self.conf_dir / name
            path.write_text(site_xml(name, properties, f"the sandbox's Hadoop daemons: {name}"))
            path.chmod(0o600)
        (self.conf_dir / "log4j.properties").write_text(LOG4J)
        for app in WEBAPPS:  # HttpServer2 looks up webapps/<name> on the class path; Maven's hadoop-hdfs has none
            (self.base / "web" / "webapps" / app).mkdir(parents=True, exist_ok=True)

    def _write_stores(self, ca: CertificateAuthority) -> None:
        """A PKCS#12 keystore (a certificate for ``localhost`` from the sandbox CA) and a truststore holding the
        CA (made by keytool: Java trusts only certificates keytool marks as trusted), one random password."""
        password_file = self.base / "tls" / "store.password"
        fd = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(24))
        password = self._store_password().encode()
        cert_pem, key_pem = ca.issue([HOST])
        from cryptography import x509

        blob = pkcs12.serialize_key_and_certificates(
            b"localhost",
            ec_key(key_pem),
            x509.load_pem_x509_certificate(cert_pem),
            [ca.cert],
            serialization.BestAvailableEncryption(password),
        )
        keystore = self.base / "tls" / "keystore.p12"
        fd = os.open(keystore, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        ca_pem = self.base / "tls" / "ca.pem"
        ca.write_ca(ca_pem)
        keytool = str(Path(shutil.which(paths.java_executable()) or "java").resolve().parent / "keytool")
        res = subprocess.run(
            [
                keytool,
                "-importcert",
                "-noprompt",
                "-alias",
                "sandbox-ca",
                "-file",
                str(ca_pem),
                "-keystore",
                str(self.truststore),
                "-storetype",
                "PKCS12",
                "-storepass:file",
                str(password_file),
            ],
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            raise EnvironmentNotReady(f"keytool could not write the Hadoop truststore: {res.stderr.strip()}")

    def make_identities(self, kdc: KDC) -> None:
        existing = kdc.kadmin(self.realm, "listprincs")
        for service in ("nn", "dn", "HTTP", "rm", "nm"):
            if self.principal(service) not in existing.split():
                kdc.add_principal(self.principal(service))
        for keytab, services in ((self.keytab("nn"), ("nn", "dn", "HTTP")), (self.keytab("rm"), ("rm", "nm"))):
            for service in services:
                kdc.export_keytab(self.principal(service), keytab)

    # ---- processes ---------------------------------------------------------------------------------
    def _java(self, daemon: str, *args: str) -> list[str]:
        return [
            paths.java_executable(),
            f"-Xmx{HEAPS[daemon]}",
            "-Xms32m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            *JAVA_OPENS,
            f"-Djava.security.krb5.conf={self.krb5_conf}",
            f"-Dhadoop.log.dir={self.base / 'logs'}",
            f"-Dproc_{daemon}",
            "-cp",
            f"{self.conf_dir}:{self.base / 'web'}:{lib_dir()}/*",
            MAIN[daemon],
            *args,
        ]

    def _env(self) -> dict[str, str]:
        java = shutil.which(paths.java_executable())
        java_home = str(Path(java).resolve().parent.parent) if java else os.environ.get("JAVA_HOME", "")
        return {
            "PATH": "/usr/bin:/bin",
            "JAVA_HOME": java_home,
            "HADOOP_CONF_DIR": str(self.conf_dir),
            "KRB5_CONFIG": str(self.krb5_conf),
            "LANG": "C.UTF-8",
            "HOME": str(self.base),
        }

    def format(self) -> None:
        res = subprocess.run(
            self._java("namenode", "-format", "-nonInteractive", "-force"),
            env=self._env(),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        (self.base / "logs" / "format.log").write_text(res.stdout + res.stderr)
        if res.returncode != 0:
            raise EnvironmentNotReady(
                f"formatting the NameNode failed; last lines of {self.base}/logs/format.log:\n"
                f"{procs.log_tail(self.base / 'logs' / 'format.log')}"
            )

    def start(self, timeout: float = 180.0) -> None:
        """Start all four daemons at once (the DataNode and NodeManager retry until their masters serve) and wait
        for each one's ready line; records each daemon's pid and seconds to ready in ``state``."""
        started = time.monotonic()
        launched = {}
        for daemon in MAIN:
            process = procs.start(self._java(daemon), env=self._env(), log=self.log(daemon), cwd=self.base)
            launched[daemon] = process
            self.state["pids"][daemon] = process.pid
        self.state["ready_seconds"] = {}
        for daemon, process in launched.items():
            log = self.log(daemon)
            procs.wait_until(
                partial(_logged, log, READY[daemon]),
                what=f"the Hadoop {daemon}",
                timeout=timeout,
                proc=process,
                log=log,
            )
            self.state["ready_seconds"][daemon] = round(time.monotonic() - started, 1)

    def stop(self) -> None:
        for daemon in reversed(list(MAIN)):
            if pid := self.state["pids"].get(daemon):
                procs.stop_pid(pid, expect_in_cmdline=MAIN[daemon], timeout=30)

    # ---- HDFS as its superuser ---------------------------------------------------------------------
    def ccache(self, service: str) -> dict[str, str]:
        """A Kerberos environment with a fresh ticket of ``service`` (kinit from its keytab)."""
        ccache = self.base / f"{service}.ccache"
        env = {**self._env(), "KRB5CCNAME": f"FILE:{ccache}"}
        res = subprocess.run(
            [find_binary("kinit"), "-kt", str(self.keytab(service)), self.principal(service)],
            env=env,
            capture_output=True,
            text=True,
        )
        if res.returncode != 0:
            raise EnvironmentNotReady(f"kinit as {self.principal(service)} failed: {res.stderr.strip()}")
        return env

    def fs_shell(self, *args: str, service: str = "nn") -> str:
        """``hdfs dfs ARGS`` (Hadoop's FsShell) as ``service`` (nn: the HDFS superuser ``hdfs``)."""
        argv = [*self._java("namenode")[:-1], "org.apache.hadoop.fs.FsShell", *args]
        res = subprocess.run(argv, env=self.ccache(service), capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if res.returncode != 0:
            raise EnvironmentNotReady(f"hdfs dfs {' '.join(args)} failed: {res.stderr.strip()[-2000:]}")
        return res.stdout

    def prepare_home(self) -> None:
        """``/user/mirror`` owned by the job's Hadoop user (Spark's staging folder and the checkpoints live there)."""
        self.fs_shell("-mkdir", "-p", f"/user/{USER}", "/tmp")
        self.fs_shell("-chown", f"{USER}", f"/user/{USER}")
        self.fs_shell("-chmod", "700", f"/user/{USER}")
        self.fs_shell("-chmod", "1777", "/tmp")

    def memory(self) -> dict[str, int]:
        """Resident memory (MiB) of each running daemon."""
        return {daemon: _rss_mib(pid) for daemon in MAIN if (pid := self.state["pids"].get(daemon))}


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _logged(path: Path, line: str) -> bool:
    return line in _read(path)


def _rss_mib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def check_dependencies() -> None:
    if not any(lib_dir().glob("hadoop-hdfs-3.*.jar")):
        raise EnvironmentNotReady(f"the Hadoop jars are missing from {lib_dir()}; run scripts/setup")


def hadoop(sandbox) -> SandboxHadoop | None:
    """The sandbox's Hadoop, or None when it was started without ``--hadoop``."""
    state = sandbox.state.get("hadoop")
    if state is None:
        return None
    return SandboxHadoop(sandbox.base / FOLDER, sandbox.sides["source"].realm, sandbox.krb5_conf, state)


def new_state() -> dict:
    return {"ports": dict(zip(PORT_NAMES, procs.free_ports(len(PORT_NAMES)))), "pids": {}}


def summary(cluster: SandboxHadoop) -> dict:
    return {
        "default_fs": cluster.default_fs,
        "resourcemanager": cluster.address("rm"),
        "conf_dir": str(cluster.conf_dir),
        "client_conf_dir": str(cluster.base / "client-conf"),
        "processes": {daemon: procs.pid_alive(pid) for daemon, pid in cluster.state["pids"].items()},
        "ready_seconds": cluster.state.get("ready_seconds", {}),
        "rss_mib": cluster.memory(),
    }


def write_client_conf(cluster: SandboxHadoop) -> Path:
    """The client configuration folder (core, hdfs, yarn site files without server secrets)."""
    folder = cluster.base / "client-conf"
    folder.mkdir(exist_ok=True, mode=0o755)
    for name, properties in cluster.client_properties().items():
        (folder / name).write_text(site_xml(name, properties, f"a client of the sandbox's Hadoop: {name}"))
    return folder
