"""The sandbox's distance (``sandbox up --wan RTT_MS[:MBIT]``, docs/wan.md): the mirror reaches the source brokers
across a link with a round trip and, if asked, a bandwidth cap, as it would from another region.

Each source broker has one more listener, ``WAN`` (SASL_SSL, as its client listener), which advertises a port of
Toxiproxy (Shopify's TCP proxy, built by scripts/setup) on the broker's own host name: Kerberos service names and TLS
host names stay true, and the clients a profile bootstraps there stay on that listener. Toxiproxy forwards each
connection to the listener with a latency toxic each way (half the round trip each) and, with a cap, a bandwidth toxic
each way. The brokers' replication, the tests' producers and every other client stay on the direct listeners.

What the proxy does not carry: TCP's own windows. Toxiproxy ends each TCP connection at itself on loopback, so the
kernel's socket buffers see loopback's round trip; Kafka's request windows (one fetch in flight per connection, its
size) see the whole round trip. The bandwidth toxic caps each connection on its own, not the sum of them."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.sandbox import procs

LISTENER = "WAN"
FOLDER = "wan"
MAX_RTT_MS = 10_000
MAX_MBIT = 100_000
_LINK = re.compile(r"^(\d{1,5})(?::(\d{1,6}(?:\.\d{1,3})?))?$")


@dataclass(frozen=True)
class Link:
    """A link's round trip in milliseconds and its bandwidth cap in Mbit/s (None: no cap)."""

    rtt_ms: int
    mbit: float | None = None

    def __str__(self) -> str:
        return f"{self.rtt_ms} ms round trip" + (f", {self.mbit:g} Mbit/s per connection" if self.mbit else "")

    @property
    def text(self) -> str:
        """As ``--wan`` takes it."""
        return f"{self.rtt_ms}" + (f":{self.mbit:g}" if self.mbit else "")

    @classmethod
    def parse(cls, text: str) -> Link:
        """``RTT_MS[:MBIT]``, e.g. ``50`` or ``100:200``; a clear sentence for anything else."""
        found = _LINK.match(text.strip())
        rtt = int(found.group(1)) if found else -1
        mbit = float(found.group(2)) if found and found.group(2) else None
        if not found or rtt > MAX_RTT_MS or (mbit is not None and not 0 < mbit <= MAX_MBIT):
            raise BadInputError(
                f"--wan {text[:40]!r} is not RTT_MS[:MBIT]: a round trip of 0 to {MAX_RTT_MS} milliseconds, "
                f"optionally a colon and a cap above 0 and up to {MAX_MBIT} Mbit/s (e.g. 50, or 100:200)"
            )
        return cls(rtt, mbit)


def ports_needed(brokers: int) -> int:
    """Toxiproxy's API port, and for each source broker its WAN listener's port and its proxy's."""
    return 1 + 2 * brokers


def new_state(ports: list[int], node_ids: list[int]) -> dict:
    """``state["wan"]``: the API port, each source broker's listener and proxy ports; no link and no proxy yet."""
    return {
        "api_port": ports[0],
        "brokers": {
            str(node): {"listener": ports[1 + 2 * i], "proxy": ports[2 + 2 * i]} for i, node in enumerate(node_ids)
        },
        "link": None,
        "pid": None,
        "profile": False,  # profile.yaml reaches the source through the proxy (sandbox up --wan)
    }


def toxics(link: Link) -> list[dict]:
    """Toxiproxy's toxics for ``link``: the round trip split over both directions (downstream takes the odd
    millisecond) and, with a cap, a bandwidth toxic each way (Toxiproxy's rate is in kB/s, 1,000 bytes)."""
    half = link.rtt_ms // 2
    found = []
    for stream, delay in (("upstream", half), ("downstream", link.rtt_ms - half)):
        if delay:
            attributes = {"latency": delay, "jitter": 0}
            found.append({"name": f"latency_{stream}", "type": "latency", "stream": stream, "attributes": attributes})
        if link.mbit:
            rate = max(1, round(link.mbit * 1000 / 8))
            found.append(
                {"name": f"bandwidth_{stream}", "type": "bandwidth", "stream": stream, "attributes": {"rate": rate}}
            )
    return found


def executable() -> Path:
    return paths.deps_dir() / "toxiproxy" / "toxiproxy-server"


class Toxiproxy:
    """The proxy of one sandbox: its process and its HTTP API on 127.0.0.1 (``state`` is ``state["wan"]``)."""

    def __init__(self, base: Path, state: dict):
        self.folder = base / FOLDER
        self.state = state

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.state['api_port']}"

    def _call(self, method: str, path: str, body: dict | None = None) -> object:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read()
        except (urllib.error.URLError, OSError) as error:
            raise EnvironmentNotReady(f"Toxiproxy at {self.api} did not answer {method} {path}: {error}") from None
        return json.loads(text) if text.strip() else None

    def start(self, hosts: dict[int, str], timeout: float = 30.0) -> int:
        """Start Toxiproxy and one proxy per source broker (``hosts``: node id -> host name); returns its pid."""
        binary = executable()
        if not binary.exists():
            raise EnvironmentNotReady(f"Toxiproxy is missing ({binary}); run scripts/setup, which builds it with Go")
        self.folder.mkdir(mode=0o700, exist_ok=True)
        argv = [str(binary), "-host", "127.0.0.1", "-port", str(self.state["api_port"])]
        log = self.folder / "toxiproxy.log"
        proc = procs.start(argv, env=procs.inherited_env(), log=log)
        self.state["pid"] = proc.pid
        procs.wait_until(
            lambda: procs.tcp_open(self.state["api_port"]), what="Toxiproxy", timeout=timeout, proc=proc, log=log
        )
        for node, ports in self.state["brokers"].items():
            proxy = {
                "name": f"source-{node}",
                "listen": f"127.0.0.1:{ports['proxy']}",
                "upstream": f"{hosts[int(node)]}:{ports['listener']}",
                "enabled": True,
            }
            self._call("POST", "/proxies", proxy)
        return proc.pid

    def set_link(self, link: Link) -> None:
        """Every proxy's toxics made ``link``'s (the old ones removed first)."""
        for node in self.state["brokers"]:
            name = f"source-{node}"
            answer = self._call("GET", f"/proxies/{name}/toxics")
            for toxic in answer if isinstance(answer, list) else []:
                self._call("DELETE", f"/proxies/{name}/toxics/{toxic['name']}")
            for toxic in toxics(link):
                self._call("POST", f"/proxies/{name}/toxics", toxic)
        self.state["link"] = asdict(link)

    def stop(self) -> None:
        if self.state.get("pid"):
            procs.stop_pid(self.state["pid"], expect_in_cmdline="toxiproxy-server")
        self.state["pid"] = None
        self.state["link"] = None

    def alive(self) -> bool:
        return bool(self.state.get("pid")) and procs.pid_alive(self.state["pid"])


class SandboxWan:
    """Mixed into :class:`~secure_mirror.sandbox.bed.Sandbox`, which provides what is declared here: the link between
    the mirror and the source brokers, started, changed and stopped on a running sandbox."""

    base: Path
    state: dict
    sides: dict
    write_profiles: Callable[[], None]
    _save: Callable[[], None]

    def _wan_proxy(self) -> Toxiproxy:
        if "wan" not in self.state:
            raise EnvironmentNotReady(
                f"the sandbox in {self.base} predates --wan (its source brokers have no WAN listener); start a new one"
            )
        return Toxiproxy(self.base, self.state["wan"])

    @property
    def wan_link(self) -> Link | None:
        """The link the proxy makes now (None: no proxy runs)."""
        found = self.state.get("wan", {}).get("link")
        return Link(**found) if found else None

    def wan_bootstrap_servers(self) -> list[str]:
        """Every source broker as the mirror reaches it across the link: its host name, its proxy's port."""
        ports = self.state["wan"]["brokers"]
        return [f"{node.host}:{ports[str(node.node_id)]['proxy']}" for node in self.sides["source"].nodes]

    def start_wan(self, link: Link, *, profile: bool = False) -> None:
        """Start the proxy (if it does not run) with ``link``, and write profile-wan.yaml (with ``profile``,
        profile.yaml too) reaching the source through it."""
        proxy = self._wan_proxy()
        if not proxy.alive():
            hosts = {node.node_id: node.host for node in self.sides["source"].nodes}
            try:
                proxy.start(hosts)
            finally:
                self._save()  # its pid, before anything can fail: `down` stops it
        proxy.set_link(link)
        self.state["wan"]["profile"] = profile or self.state["wan"].get("profile", False)
        self._save()
        self.write_profiles()

    def stop_wan(self) -> None:
        """Stop the proxy; profile.yaml reaches the source directly again."""
        if "wan" not in self.state:
            return
        self._wan_proxy().stop()
        (self.base / "profile-wan.yaml").unlink(missing_ok=True)
        self.state["wan"]["profile"] = False
        self._save()
        self.write_profiles()
