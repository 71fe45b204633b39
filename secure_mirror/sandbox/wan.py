"""The sandbox's distance (``sandbox up --wan RTT_MS[:MBIT]``, docs/wan.md): the mirror reaches the source brokers
across a link with a round trip and, if asked, a bandwidth cap, as it would from another region.

Each source broker has one more listener, ``WAN`` (SASL_SSL, as its client listener), which advertises a port of
Toxiproxy (Shopify's TCP proxy, built by scripts/setup) on the broker's own host name: Kerberos service names and TLS
host names stay true, and the clients a profile bootstraps there stay on that listener. Toxiproxy forwards each
connection to the listener with a latency toxic each way (half the round trip each) and, with a cap, a bandwidth toxic
each way. The brokers' replication, the tests' producers and every other client stay on the direct listeners.

A cap is one for the whole link, shared by every connection as a WAN link's is: an HTB class on the loopback device
each way (``tc``; the kernel has HTB but no netem), into which a filter puts only the packets to and from the proxy's
ports; all other loopback traffic passes unshaped. Where ``tc`` cannot (not root, no HTB, another root qdisc on
``lo``), the cap falls back to Toxiproxy's bandwidth toxic, which caps each connection on its own; the state says
which (``cap``).

What the proxy does not carry: TCP's own windows. Toxiproxy ends each TCP connection at itself on loopback, so the
kernel's socket buffers see loopback's round trip; Kafka's request windows (one fetch in flight per connection, its
size) see the whole round trip."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
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
        return f"{self.rtt_ms} ms round trip" + (f", {self.mbit:g} Mbit/s" if self.mbit else "")

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


SHARED = "shared"  # state["wan"]["cap"]: one HTB class each way for all the link's connections
PER_CONNECTION = "per connection"  # Toxiproxy's bandwidth toxic on each connection
TC_HANDLE = "5a4d:"  # the root qdisc this sandbox puts on lo (hex); another one there is left alone


def toxics(link: Link, *, cap_each_connection: bool = True) -> list[dict]:
    """Toxiproxy's toxics for ``link``: the round trip split over both directions (downstream takes the odd
    millisecond) and, with a cap that ``tc`` does not make (``cap_each_connection``), a bandwidth toxic each way
    (Toxiproxy's rate is in kB/s, 1,000 bytes)."""
    half = link.rtt_ms // 2
    found = []
    for stream, delay in (("upstream", half), ("downstream", link.rtt_ms - half)):
        if delay:
            attributes = {"latency": delay, "jitter": 0}
            found.append({"name": f"latency_{stream}", "type": "latency", "stream": stream, "attributes": attributes})
        if link.mbit and cap_each_connection:
            rate = max(1, round(link.mbit * 1000 / 8))
            found.append(
                {"name": f"bandwidth_{stream}", "type": "bandwidth", "stream": stream, "attributes": {"rate": rate}}
            )
    return found


def shaping(mbit: float, proxy_ports: list[int], device: str = "lo") -> list[list[str]]:
    """``tc``'s commands for a cap of ``mbit`` shared by every connection through the proxy: an HTB root on
    ``device`` without a default class (what no filter takes passes unshaped), one class each way at the cap, and
    filters putting packets from a proxy port (downstream, to the mirror) in one and to it (upstream) in the other.
    The burst is 10 ms of the cap, at least four of loopback's 64 KiB packets."""
    rate = f"{round(mbit * 1000)}kbit"
    burst = str(max(4 * 65536, round(mbit * 1e6 / 8 / 100)))
    commands = [f"tc qdisc replace dev {device} root handle {TC_HANDLE} htb".split()]
    for minor in ("1", "2"):
        commands.append(
            f"tc class add dev {device} parent {TC_HANDLE} classid {TC_HANDLE}{minor} htb rate {rate} ceil {rate} "
            f"burst {burst} cburst {burst}".split()
        )
    for port in proxy_ports:
        for field, minor in (("sport", "1"), ("dport", "2")):
            commands.append(
                f"tc filter add dev {device} parent {TC_HANDLE} protocol ip prio 1 u32 match ip {field} {port} 0xffff "
                f"flowid {TC_HANDLE}{minor}".split()
            )
    return commands


def root_qdisc_is(shown: str, handle: str = TC_HANDLE) -> str:
    """What ``tc qdisc show dev lo`` says is at the root (``qdisc KIND HANDLE root ...``): ``ours``, ``none`` (the
    kernel's own, which a replace may take over), or ``other`` (someone else's: not to be replaced)."""
    for line in shown.splitlines():
        words = line.split()
        if len(words) >= 4 and words[0] == "qdisc" and words[3] == "root":
            if words[1] == "htb" and words[2] == handle:
                return "ours"
            return "none" if words[1] in ("noqueue", "pfifo_fast", "fq_codel", "mq") else "other"
    return "none"


def sent_bytes(shown: str) -> int | None:
    """The bytes a class sent, from ``tc -s class show``'s ``Sent N bytes`` line (None if there is none)."""
    found = re.search(r"Sent (\d+) bytes", shown)
    return int(found.group(1)) if found else None


class Shaper:
    """The shared cap on the loopback device (``tc``): made, changed and removed with the link."""

    def __init__(self, device: str = "lo"):
        self.device = device

    def _tc(self, argv: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)

    def why_not(self) -> str | None:
        """Why ``tc`` cannot make the shared cap here, or None."""
        if shutil.which("tc") is None:
            return "tc is not installed"
        if os.geteuid() != 0:
            return "tc needs root to shape the loopback device"
        shown = self._tc(["tc", "qdisc", "show", "dev", self.device])
        if shown.returncode != 0:
            return f"tc qdisc show failed: {shown.stderr.strip()[:200]}"
        if root_qdisc_is(shown.stdout) == "other":
            return f"another root qdisc is on {self.device}: {shown.stdout.strip()[:200]}"
        return None

    def cap(self, mbit: float, proxy_ports: list[int]) -> str | None:
        """Make the shared cap; None when done, else why not (nothing is left half made)."""
        reason = self.why_not()
        if reason:
            return reason
        self.remove()
        for argv in shaping(mbit, proxy_ports, self.device):
            done = self._tc(argv)
            if done.returncode != 0:
                self.remove()
                return f"{' '.join(argv[:4])} failed: {done.stderr.strip()[:200]}"
        return None

    def downstream_bytes(self) -> int | None:
        """What the shared cap's downstream class (the source's answers, towards the mirror) has sent so far."""
        shown = self._tc(["tc", "-s", "class", "show", "dev", self.device, "classid", TC_HANDLE + "1"])
        return sent_bytes(shown.stdout) if shown.returncode == 0 else None

    def remove(self) -> None:
        """Remove this sandbox's root qdisc from the device, if it is there."""
        shown = self._tc(["tc", "qdisc", "show", "dev", self.device]) if shutil.which("tc") else None
        if shown is not None and root_qdisc_is(shown.stdout) == "ours":
            self._tc(["tc", "qdisc", "del", "dev", self.device, "root", "handle", TC_HANDLE])


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
        """Every proxy's toxics made ``link``'s (the old ones removed first), and its cap: shared by all connections
        when ``tc`` can make it (:class:`Shaper`), else on each connection (``state["cap_note"]`` says why)."""
        self.state["cap"] = self.state["cap_note"] = None
        if link.mbit:  # the cap replaces this sandbox's earlier one
            reason = Shaper().cap(link.mbit, [ports["proxy"] for ports in self.state["brokers"].values()])
            self.state["cap"] = PER_CONNECTION if reason else SHARED
            self.state["cap_note"] = reason
        else:
            Shaper().remove()
        for node in self.state["brokers"]:
            name = f"source-{node}"
            answer = self._call("GET", f"/proxies/{name}/toxics")
            for toxic in answer if isinstance(answer, list) else []:
                self._call("DELETE", f"/proxies/{name}/toxics/{toxic['name']}")
            for toxic in toxics(link, cap_each_connection=self.state["cap"] == PER_CONNECTION):
                self._call("POST", f"/proxies/{name}/toxics", toxic)
        self.state["link"] = asdict(link)

    def stop(self) -> None:
        if self.state.get("pid"):
            procs.stop_pid(self.state["pid"], expect_in_cmdline="toxiproxy-server")
        if self.state.get("cap") == SHARED:
            Shaper().remove()
        self.state["pid"] = None
        self.state["link"] = None
        self.state["cap"] = self.state["cap_note"] = None

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

    def wan_link_text(self) -> str:
        """The link in words, with how its cap is made (shared by all connections, or on each, and why)."""
        state = self.state.get("wan", {})
        link = self.wan_link
        if link is None:
            return "no link"
        if state.get("cap") == SHARED:
            return f"{link}, shared by all connections (tc HTB on lo)"
        if state.get("cap") == PER_CONNECTION:
            return f"{link} on each connection (Toxiproxy; no shared cap: {state.get('cap_note')})"
        return str(link)

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
