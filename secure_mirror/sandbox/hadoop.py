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
import shutil
import subprocess
import time
from functools import partial
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.hadoop_config import HadoopConfig
from secure_mirror.sandbox.kdc import find_binary

FOLDER = "hadoop"
USER = "mirror"  # the Hadoop user of the job's identity (mirror/mirror.source.test@SOURCE.TEST)
HEAPS = {"namenode": "256m", "datanode": "192m", "resourcemanager": "384m", "nodemanager": "256m"}
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


def lib_dir() -> Path:
    return paths.deps_dir() / "hadoop" / "lib"


class SandboxHadoop(HadoopConfig):
    """The four daemons, started, stopped and asked; ``state`` (ports, pids, start seconds) is kept in the sandbox's
    state.json."""

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
