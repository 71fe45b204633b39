"""Each broker's round trip as a client sees it: the time between sending a request and reading its answer on an open
connection. Asked with ApiVersions (``api_versions``), which a broker answers before authentication on any listener:
no credential is sent. The connection and its TLS handshake are made first and not timed; the least of a few samples
is the round trip (the others carry the broker's or this machine's pauses). A proxy that ends TCP near the client
(as a WAN optimiser or Toxiproxy does) shows here as it shows to Kafka's requests, which a TCP connect's time would
not. Also the most this machine's kernel gives a socket's receive buffer, which a consumer's ``receive.buffer.bytes``
-1 grows to."""

from __future__ import annotations

import socket
import ssl
import struct
import time
from pathlib import Path
from typing import TypedDict, final

from secure_mirror.preflight.probes import Failed
from secure_mirror.preflight.probes.api_versions import ApiVersionsError, parse, request
from secure_mirror.preflight.probes.wire import recv_exactly

SAMPLES = 3
TCP_RMEM = Path("/proc/sys/net/ipv4/tcp_rmem")


@final
class RoundTrip(TypedDict):
    ms: float  # the least sample
    samples: list[float]


def sample(host: str, port: int, tls: ssl.SSLContext | None, timeout: float) -> float:
    """One request's round trip in milliseconds, on a new connection made (and TLS completed) before it."""
    with socket.create_connection((host, port), timeout=timeout) as raw:
        # as Kafka's clients (tcp no-delay): with Nagle on, the request waited for the ack of the handshake's last
        # message, which the peer may delay, and a 25 ms link measured about 55 ms (benchmarks/NOTES.md section 24)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = tls.wrap_socket(raw, server_hostname=host) if tls is not None else raw
        with conn:
            started = time.perf_counter()
            conn.sendall(request())
            (size,) = struct.unpack(">i", recv_exactly(conn, 4, ApiVersionsError, "the broker"))
            elapsed = time.perf_counter() - started
            if not 0 < size < 1 << 20:
                raise ApiVersionsError("the broker's answer has an implausible size")
            parse(recv_exactly(conn, size, ApiVersionsError, "the broker"))
            return elapsed * 1000


def measure(
    servers: list[tuple[str, int]], tls: ssl.SSLContext | None, timeout: float, samples: int = SAMPLES
) -> dict[str, RoundTrip | Failed]:
    """``host:port`` -> its round trip, or {"error": why it could not be measured}."""
    found: dict[str, RoundTrip | Failed] = {}
    for host, port in servers:
        try:
            taken = [round(sample(host, port, tls, timeout), 2) for _ in range(samples)]
            found[f"{host}:{port}"] = {"ms": min(taken), "samples": taken}
        except (OSError, ssl.SSLError, ApiVersionsError) as error:
            found[f"{host}:{port}"] = {"error": str(error) or type(error).__name__}
    return found


def receive_buffer_max(path: Path = TCP_RMEM) -> int | None:
    """The most bytes the kernel lets a TCP socket's receive buffer grow to (tcp_rmem's third field); None unknown."""
    try:
        return int(path.read_text().split()[2])
    except (OSError, ValueError, IndexError):
        return None
