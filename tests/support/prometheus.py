"""A real Prometheus server (Debian's ``prometheus``, installed by scripts/setup) on loopback, scraping what a test
points it at with monitoring/prometheus.yml's scrape jobs, their ``metric_relabel_configs`` included, as an operator's
server would. Started in a throwaway folder, waited for with a timeout, asked over its HTTP API (``/api/v1/query``);
its log is in every failure message."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import yaml

from secure_mirror import paths

CONFIG = paths.REPO_ROOT / "monitoring" / "prometheus.yml"
Series = tuple[str, tuple[tuple[str, str], ...]]  # (name, sorted labels but job and instance)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def derived_config(targets: dict[str, str], interval: str = "1s") -> dict:
    """monitoring/prometheus.yml with each job of ``targets`` scraping ``targets[job]`` (host:port) every ``interval``
    and every other job left out; everything else, the relabelling first, as written there."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    jobs = [job for job in config["scrape_configs"] if job["job_name"] in targets]
    assert sorted(job["job_name"] for job in jobs) == sorted(targets), f"{CONFIG} has no job of {sorted(targets)}"
    config["global"] = {**config.get("global", {}), "scrape_interval": interval, "scrape_timeout": interval}
    config["scrape_configs"] = [{**job, "static_configs": [{"targets": [targets[job["job_name"]]]}]} for job in jobs]
    return config


class Prometheus:
    """``with Prometheus(folder, {job: "127.0.0.1:port"}) as server:`` a server scraping those targets."""

    def __init__(self, folder: Path, targets: dict[str, str], timeout: float = 60.0):
        self.folder, self.targets, self.timeout = folder, targets, timeout
        self.port = free_port()
        self.log = folder / "prometheus.log"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Prometheus:
        binary = shutil.which("prometheus") or "/usr/bin/prometheus"
        assert Path(binary).exists(), "Debian's prometheus is not installed: run scripts/setup"
        config = self.folder / "prometheus.yml"
        config.write_text(yaml.safe_dump(derived_config(self.targets)))
        argv = [binary, f"--config.file={config}", f"--storage.tsdb.path={self.folder / 'data'}"]
        argv += [f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.timeout
        while not self._ready():
            assert self.process.poll() is None and time.monotonic() < deadline, f"Prometheus did not start: {self}"
            time.sleep(0.2)
        return self

    def __exit__(self, *_exc) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def __str__(self) -> str:
        return f"Prometheus on 127.0.0.1:{self.port}; its log:\n{self.log.read_text(errors='replace')[-3000:]}"

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=5) as answer:
                return answer.status == 200
        except OSError:
            return False

    def query(self, expression: str) -> dict[Series, float]:
        """An instant query's vector: each series' latest sample, ``job`` and ``instance`` left out of its labels."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", (body, str(self))
        found = {}
        for row in body["data"]["result"]:
            labels = {k: v for k, v in row["metric"].items() if k not in ("job", "instance")}
            name = labels.pop("__name__")
            found[(name, tuple(sorted(labels.items())))] = float(row["value"][1])
        return found

    def job_series(self, job: str, prefix: str) -> dict[Series, float]:
        """What Prometheus stored from ``job`` (after its relabelling) under names starting with ``prefix``."""
        return self.query(f'{{job="{job}",__name__=~"{prefix}.*"}}')

    def up(self, job: str) -> float | None:
        found = self.query(f'up{{job="{job}"}}')
        return next(iter(found.values()), None)
