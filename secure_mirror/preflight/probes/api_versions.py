"""Which Kafka line a broker runs, from the API versions it offers (ApiVersions v0, KIP-35).

A broker answers ApiVersions before authentication, on any listener, so this asks with a bare TCP (or TLS)
connection: no credentials are sent. What pre-flight needs to know:

- Metadata v8 (Kafka 2.3, KIP-430) is the first that reports a client's authorized operations; older brokers leave
  them out, and pre-flight asks in other ways;
- DescribeCluster (API key 60, Kafka 2.8) came with KIP-679, since which WRITE on a topic allows the idempotent
  producer; before it the identity needs IDEMPOTENT_WRITE on the cluster.
"""

from __future__ import annotations

import socket
import ssl
import struct
from dataclasses import dataclass
from typing import TypedDict, final

from secure_mirror.preflight.probes import Failed
from secure_mirror.preflight.probes.wire import recv_exactly
from secure_mirror.profile.cluster import Cluster

API_VERSIONS = 18
METADATA = 3
DESCRIBE_CLUSTER = 60
CLIENT_ID = b"secure-mirror-preflight"


class ApiVersionsError(Exception):
    pass


@dataclass(frozen=True)
class BrokerApis:
    versions: dict[int, tuple[int, int]]  # api key -> (min, max)

    @property
    def reports_authorized_operations(self) -> bool:
        return self.versions.get(METADATA, (0, -1))[1] >= 8

    @property
    def write_allows_idempotence(self) -> bool:
        return DESCRIBE_CLUSTER in self.versions

    @property
    def line(self) -> str:
        """The Kafka line these APIs imply, in words."""
        if self.write_allows_idempotence:
            return "Kafka 2.8 or later"
        if self.reports_authorized_operations:
            return "Kafka 2.3 to 2.7"
        return "a Kafka older than 2.3"


def request(correlation_id: int = 1) -> bytes:
    """ApiVersions v0 with a v1 request header (api key, version, correlation id, client id)."""
    body = struct.pack(">hhih", API_VERSIONS, 0, correlation_id, len(CLIENT_ID)) + CLIENT_ID
    return struct.pack(">i", len(body)) + body


def parse(reply: bytes, correlation_id: int = 1) -> BrokerApis:
    """The ApiVersions v0 response body (after its size): correlation id, error code, [api key, min, max]."""
    try:
        got, error, count = struct.unpack_from(">ihi", reply, 0)
        if got != correlation_id:
            raise ApiVersionsError("the broker answered another request")
        if error != 0:
            raise ApiVersionsError(f"the broker refused ApiVersions (error {error})")
        versions = {}
        for i in range(count):
            key, low, high = struct.unpack_from(">hhh", reply, 10 + 6 * i)
            versions[key] = (low, high)
    except struct.error:
        raise ApiVersionsError("the broker's ApiVersions answer is cut short") from None
    return BrokerApis(versions)


def ask(host: str, port: int, tls: ssl.SSLContext | None, timeout: float) -> BrokerApis:
    """Ask one broker; ``tls`` for an SSL or SASL_SSL listener."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            conn = tls.wrap_socket(raw, server_hostname=host) if tls is not None else raw
            with conn:
                conn.sendall(request())
                (size,) = struct.unpack(">i", recv_exactly(conn, 4, ApiVersionsError, "the broker"))
                if not 0 < size < 1 << 20:
                    raise ApiVersionsError("the broker's answer has an implausible size")
                return parse(recv_exactly(conn, size, ApiVersionsError, "the broker"))
    except (OSError, ssl.SSLError) as exc:
        raise ApiVersionsError(f"cannot ask {host}:{port} for its API versions: {exc}") from None


@final
class Apis(TypedDict):
    apis: BrokerApis


def answer(host: str, port: int, tls: ssl.SSLContext | None, timeout: float) -> Apis | Failed:
    """{"apis": BrokerApis} of one broker, or {"error": why it could not be asked}."""
    try:
        return {"apis": ask(host, port, tls, timeout)}
    except ApiVersionsError as exc:
        return {"error": str(exc)}


def operations_reported(cluster: Cluster, timeout: float) -> bool | None:
    """Whether ``cluster``'s first broker reports a client's authorized operations (Kafka 2.3+), so that none reported
    means none granted (confluent-kafka hands an empty set over as None, as it does operations not reported); None
    when the broker could not be asked."""
    from secure_mirror.preflight.probes import tls

    host, port = cluster.brokers[0]
    context = tls.context_for(cluster.tls_settings) if cluster.uses_tls else None
    reply = answer(host, port, context, timeout)
    return None if "error" in reply else reply["apis"].reports_authorized_operations
