"""``source.kafka.round-trip``: each source broker's round trip, and whether the source consumer's settings let a
connection carry a link's bandwidth at that round trip (docs/wan.md).

A Kafka consumer has one fetch in flight per broker connection: at most one response (``fetch.max.bytes``; a
partition's share at most ``max.partition.fetch.bytes``) a round trip, and TCP at most one receive window
(``receive.buffer.bytes``; -1: the kernel grows it up to tcp_rmem's maximum) a round trip. Any of them below the
bandwidth-delay product caps each connection below the link. Asked through ``probes.round_trip`` (ApiVersions, no
credentials); judged by the pure ``round_trip_check``. It warns at most, never fails: a slow mirror is not a broken
one, and pre-flight does not know the link's bandwidth (it judges against ``LINK_MBIT`` unless told)."""

from __future__ import annotations

from dataclasses import dataclass

from secure_mirror.preflight.checks.base import SideChecks, check
from secure_mirror.preflight.model import PASS, SKIPPED, WARN, Check
from secure_mirror.preflight.probes import Failed, round_trip, tls
from secure_mirror.preflight.probes.round_trip import RoundTrip
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile

WHAT = "kafka.round-trip"
LINK_MBIT = 1000.0  # the link judged against: 1 Gbit/s between regions, a common interconnect (docs/wan.md)
FAR_MS = 5.0  # below this, a round trip is a data centre's: no window setting matters there
KAFKA_FETCH_MAX = 50 * 1024 * 1024  # fetch.max.bytes, Kafka's default (and the job's)
MIB = 1024 * 1024


def measure(
    run: SideChecks, profile: Profile, cluster: Cluster, nodes: list[tuple[int, str, int]], timeout: float
) -> None:
    """``kafka.round-trip`` of the brokers ``nodes`` (the metadata's), on the source only: the job consumes there."""
    if run.side != "source":
        return
    context = tls.context_for(cluster.tls_settings) if cluster.uses_tls else None
    answers = round_trip.measure([(host, port) for _, host, port in nodes], context, timeout)
    settings = {**profile.source_java_consumer_defaults, **{k: str(v) for k, v in cluster.client_options.items()}}
    run.extend(round_trip_check(run.side, answers, settings, round_trip.receive_buffer_max()))


@dataclass(frozen=True)
class Ceiling:
    setting: str  # the consumer setting that bounds it
    window: int  # bytes a round trip
    per: str  # "connection" or "partition"

    def mbit(self, rtt_ms: float) -> float:
        return self.window * 8 / (max(rtt_ms, 0.001) / 1000) / 1e6


def ceilings(settings: dict[str, str], kernel_max: int | None) -> list[Ceiling]:
    """What bounds one consumer connection's bytes a round trip, from the consumer's ``settings`` (the profile's
    ``source.client_options`` over the job's defaults): the fetch response, the receive buffer (-1: the kernel's
    most, when known) and, if the profile sets it, a partition's share (the job sizes it itself otherwise)."""
    found = [Ceiling("fetch.max.bytes", _int(settings.get("fetch.max.bytes"), KAFKA_FETCH_MAX), "connection")]
    buffer = _int(settings.get("receive.buffer.bytes"), 64 * 1024)
    if buffer > 0:
        found.append(Ceiling("receive.buffer.bytes", buffer, "connection"))
    elif kernel_max:
        found.append(Ceiling("receive.buffer.bytes -1 (the kernel's tcp_rmem maximum)", kernel_max, "connection"))
    if "max.partition.fetch.bytes" in settings:
        found.append(
            Ceiling("max.partition.fetch.bytes", _int(settings["max.partition.fetch.bytes"], MIB), "partition")
        )
    return found


def _int(text: str | None, default: int) -> int:
    try:
        return int(str(text).strip()) if text is not None else default
    except ValueError:
        return default


def round_trip_check(
    side: str,
    answers: dict[str, RoundTrip | Failed],
    settings: dict[str, str],
    kernel_max: int | None,
    link_mbit: float = LINK_MBIT,
) -> Check:
    """PASS with each broker's round trip and the ceilings; WARN naming each setting that caps a connection (or a
    partition) below ``link_mbit`` at the slowest broker's round trip, with the figures and the size that would not;
    SKIPPED when no broker could be measured."""
    measured = {server: a["ms"] for server, a in answers.items() if "ms" in a}
    unmeasured = {server: a["error"] for server, a in answers.items() if "error" in a}
    if not measured:
        reasons = "; ".join(f"{s}: {e}" for s, e in unmeasured.items()) or "no broker named"
        return check(side, WHAT, SKIPPED, f"skipped: no broker's round trip could be measured ({reasons})")
    slowest = max(measured.values())
    found = ceilings(settings, kernel_max)
    details = {
        "round_trip_ms": measured,
        "unmeasured": unmeasured,
        "link_mbit": link_mbit,
        "ceilings_mbit": {c.setting: round(c.mbit(slowest)) for c in found},
    }
    times = ", ".join(f"{s} {ms:.1f} ms" for s, ms in measured.items())
    low = [c for c in found if c.mbit(slowest) < link_mbit] if slowest >= FAR_MS else []
    if not low:
        least = min(found, key=lambda c: c.window)
        finding = f"round trip {times}; at {slowest:.1f} ms each consumer connection can carry "
        finding += f"{least.mbit(slowest):,.0f} Mbit/s ({least.setting} {least.window:,} bytes a round trip)"
        if slowest < FAR_MS:
            finding += ": a round trip this short leaves the windows no part to play"
        return check(side, WHAT, PASS, finding, details=details)
    need = int(link_mbit * 1e6 / 8 * slowest / 1000)  # the bandwidth-delay product, in bytes
    said = "; ".join(f"{c.setting} {c.window:,} bytes caps each {c.per} at {c.mbit(slowest):,.0f} Mbit/s" for c in low)
    finding = f"round trip {times}; at {slowest:.1f} ms {said}, below a {link_mbit:,.0f} Mbit/s link"
    fix = f"a {link_mbit:,.0f} Mbit/s link at {slowest:.1f} ms holds {need:,} bytes in flight (its bandwidth-delay "
    fix += f"product): {'; '.join(_fix(c, need) for c in low)}"
    return check(side, WHAT, WARN, finding, fix, details=details)


def _fix(ceiling: Ceiling, need: int) -> str:
    if ceiling.setting.startswith("receive.buffer.bytes -1"):
        return f"raise the kernel's net.ipv4.tcp_rmem maximum (sysctl) to at least {need:,}"
    return f"set source.client_options.{ceiling.setting} to at least {need:,}"
