"""A local Spark standalone cluster for the test bed: one master and N workers, each a JVM of its own, started
from the pyspark installation (``bin/spark-class``), bound to 127.0.0.1 on free ports, all under one folder.

Each worker runs its executors in ``workers/N/work/<app id>/<executor id>/``, which is also where an executor
fetches the files shipped with ``--files`` (its working directory); ``executor_dirs`` lists those folders.
``stop`` ends only the processes this object started, by pid (after checking their command lines).

Like a cluster whose operators secured it, the master, the workers and their executors authenticate and encrypt
Spark's own connections with one random secret (``spark.authenticate``, ``spark.network.crypto.enabled``), kept in
``conf/spark-defaults.conf`` (mode 0600); an application joins with ``client_env()``, which points spark-submit at
that folder. ``secure=False`` starts a cluster without them.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.render.java_properties import properties_text
from secure_mirror.sandbox import procs

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
DAEMON_HEAP = "512m"


def spark_home() -> Path:
    """The Spark distribution inside the pyspark package of this Python."""
    try:
        import pyspark
    except ImportError:
        raise EnvironmentNotReady("pyspark is not installed in this Python; run scripts/setup") from None
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").exists():
        raise EnvironmentNotReady(f"{home}/bin/spark-class is missing; reinstall pyspark (scripts/setup)")
    return home


@dataclass
class SparkStandalone:
    """``with SparkStandalone(folder) as cluster:`` gives a master URL (``cluster.master_url``) with
    ``workers`` workers of ``cores`` cores and ``memory`` each."""

    base: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    master_port: int = 0
    ui_port: int = 0
    secure: bool = True
    secret: str = field(default="", repr=False)  # the cluster's spark.authenticate.secret when secure
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    @property
    def ui_url(self) -> str:
        return f"http://127.0.0.1:{self.ui_port}"

    def work_dir(self, index: int) -> Path:
        return self.base / "workers" / str(index) / "work"

    def log(self, name: str) -> Path:
        return self.base / "logs" / f"{name}.log"

    @property
    def conf_dir(self) -> Path:
        return self.base / "conf"

    def client_env(self) -> dict[str, str]:
        """This environment with ``SPARK_CONF_DIR`` naming the cluster's configuration (its secret included), as on
        a machine its operators set up to submit: spark-submit reads ``spark-defaults.conf`` there."""
        return {**os.environ, "SPARK_CONF_DIR": str(self.conf_dir)}

    def _write_conf(self) -> None:
        settings = {}
        if self.secure:
            self.secret = secrets.token_hex(32)
            settings = {
                "spark.authenticate": "true",
                "spark.authenticate.secret": self.secret,
                "spark.network.crypto.enabled": "true",
                "spark.io.encryption.enabled": "true",
            }
        self.conf_dir.mkdir(mode=0o700, exist_ok=True)
        path = self.conf_dir / "spark-defaults.conf"
        path.touch(mode=0o600)
        path.write_text(properties_text(settings, []))

    # ---- lifecycle ---------------------------------------------------------------------------------
    def start(self, timeout: float = 120.0) -> SparkStandalone:
        self.base = Path(self.base).resolve()
        (self.base / "logs").mkdir(parents=True, exist_ok=True)
        self.base.chmod(0o700)  # executors keep the shipped keytabs in their work folders
        self._write_conf()
        ports = procs.free_ports(2 + 2 * self.workers)
        self.master_port, self.ui_port = ports[:2]
        try:
            master = self._launch(
                "master",
                MASTER_CLASS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.master_port),
                "--webui-port",
                str(self.ui_port),
            )
            procs.wait_until(
                lambda: procs.tcp_open(self.master_port) and self._json() is not None,
                what="the Spark master",
                timeout=timeout,
                proc=master,
                log=self.log("master"),
            )
            for index in range(self.workers):
                self.work_dir(index).mkdir(parents=True, exist_ok=True)
                port, ui = ports[2 + 2 * index : 4 + 2 * index]
                self._launch(
                    f"worker-{index}",
                    WORKER_CLASS,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui),
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    str(self.work_dir(index)),
                    self.master_url,
                )
            procs.wait_until(
                lambda: len(self.alive_workers()) >= self.workers,
                what=f"{self.workers} Spark workers registered with the master",
                timeout=timeout,
                log=self.log("worker-0"),
            )
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, name: str, main_class: str, *args: str):
        home = spark_home()
        env = {k: os.environ[k] for k in ("PATH", "JAVA_HOME", "LANG", "HOME", "TMPDIR") if k in os.environ}
        java = paths.java_executable()
        if java != "java":
            env["JAVA_HOME"] = str(Path(java).parent.parent)
        env.update(
            {
                "SPARK_HOME": str(home),
                "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_DAEMON_MEMORY": DAEMON_HEAP,
                "SPARK_LOG_DIR": str(self.base / "logs"),
                "PYSPARK_PYTHON": sys.executable,
                "SPARK_CONF_DIR": str(self.conf_dir),
            }
        )
        # umask 077: the copies of shipped keytabs that executors fetch into their work folders stay private
        argv = ["bash", "-c", 'umask 077 && exec "$0" "$@"', str(home / "bin" / "spark-class"), main_class, *args]
        process = procs.start(argv, env=env, log=self.log(name), cwd=self.base)
        self.pids[name] = process.pid
        return process

    def stop(self) -> None:
        for name, pid in reversed(list(self.pids.items())):
            procs.stop_pid(pid, expect_in_cmdline=MASTER_CLASS if name == "master" else WORKER_CLASS, timeout=30)
        self.pids.clear()

    def __enter__(self) -> SparkStandalone:
        return self.start()

    def __exit__(self, *_exc) -> None:
        self.stop()

    # ---- what the cluster did ----------------------------------------------------------------------
    def _json(self) -> dict | None:
        try:
            with urllib.request.urlopen(f"{self.ui_url}/json/", timeout=5) as response:
                return json.load(response)
        except (OSError, ValueError):
            return None

    def status(self) -> dict:
        """The master's own view (``/json/``): workers, active and completed applications."""
        state = self._json()
        if state is None:
            raise EnvironmentNotReady(f"the Spark master at {self.ui_url} does not answer; see {self.log('master')}")
        return state

    def alive_workers(self) -> list[dict]:
        state = self._json() or {}
        return [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]

    def executor_dirs(self, app_id: str | None = None) -> list[Path]:
        """The working folders of the executors the workers ran (of one application, or of all)."""
        pattern = f"{app_id}/*" if app_id else "app-*/*"
        return sorted(d for i in range(self.workers) for d in self.work_dir(i).glob(pattern) if d.is_dir())
