"""The requests a sandbox broker has served, by API, as the broker itself counts them (Kafka's
``kafka.network:type=RequestMetrics,name=RequestsPerSec,request=*`` counters): a JMX agent started in the running
broker's JVM (``jcmd PID ManagementAgent.start``, loopback, once per broker) and read by Kafka's own JmxTool."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from secure_mirror import paths
from secure_mirror.sandbox import procs

PATTERN = "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=*,version=*"
PORT = re.compile(r"com\.sun\.management\.jmxremote\.port = (\d+)")
LINE = re.compile(r"request=(\w+),version=\d+:Count=(\d+)")


def jmx_port(pid: int) -> int:
    """The loopback JMX port of the JVM ``pid``: its agent's, or one started in it now."""
    jcmd = str(Path(f"/proc/{pid}/exe").resolve().with_name("jcmd"))
    status = subprocess.run([jcmd, str(pid), "ManagementAgent.status"], capture_output=True, text=True, timeout=60)
    if found := PORT.search(status.stdout):
        return int(found.group(1))
    port = procs.free_ports(1)[0]
    settings = [
        f"jmxremote.port={port}",
        f"jmxremote.rmi.port={port}",
        "jmxremote.authenticate=false",
        "jmxremote.ssl=false",
    ]
    subprocess.run([jcmd, str(pid), "ManagementAgent.start", *settings], check=True, capture_output=True, timeout=60)
    return port


def counts(pid: int) -> dict[str, int]:
    """Requests served so far by the broker ``pid``, by API (versions added up)."""
    url = f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{jmx_port(pid)}/jmxrmi"
    argv = [
        paths.java_executable(),
        "-Xmx128m",
        "-cp",
        paths.kafka_classpath(),
        "org.apache.kafka.tools.JmxTool",
        "--jmx-url",
        url,
        "--object-name",
        PATTERN,
        "--attributes",
        "Count",
        "--one-time",
        "true",
        "--report-format",
        "properties",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    out: dict[str, int] = {}
    for match in LINE.finditer(done.stdout):
        out[match.group(1)] = out.get(match.group(1), 0) + int(match.group(2))
    return out


def difference(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """Requests by API between two readings (those with none left out)."""
    return {api: n - before.get(api, 0) for api, n in sorted(after.items()) if n - before.get(api, 0)}
