"""A side's checks in the order they run, in its worker process (see ``workers``): the first phase of each side
(settings and files, Kerberos, TLS, the connection and, on the source, the topic selection) and the target's second
phase, which needs the source's topics to name the target's.

A check whose prerequisite did not pass is reported as skipped, naming the prerequisite, so one cause yields one
failure: a stopped KDC fails ``<side>.kerberos.initial-ticket`` and skips what depends on it."""

from __future__ import annotations

from dataclasses import dataclass, field

from secure_mirror.preflight.checks import connection, kerberos, settings, source, target
from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.model import Check
from secure_mirror.profile.models import GssapiSasl, Profile, Side


@dataclass
class SideFacts:
    """What a side's first phase hands back to the runner."""

    checks: list[Check]
    topics: dict[str, int] | None = None  # the source's selected topics -> partitions
    hosts: list[str] = field(default_factory=list)


def first_phase(profile: Profile, side: Side, timeout: float, krb5_conf: str | None) -> SideFacts:
    cluster = profile.cluster(side)
    run = SideChecks(side)
    run.extend(settings.weak_settings(profile, side))
    settings.local_files(run, cluster, krb5_conf)
    creds = None
    if isinstance(cluster.sasl, GssapiSasl):
        kerberos.kdc_clocks(run, profile, cluster.sasl, timeout)
        creds = kerberos.tickets(run, cluster, cluster.sasl)
    if cluster.uses_tls:
        connection.tls_certificates(run, cluster, timeout)
    facts = SideFacts(run.checks)
    connected = connection.connect(run, cluster, timeout)
    if connected is None:
        return facts
    facts.hosts = connected.hosts
    if creds is not None and isinstance(cluster.sasl, GssapiSasl):
        kerberos.broker_tickets(run, cluster, cluster.sasl, creds, connected.hosts)
    if side == "source":
        checks, facts.topics = source.source_topics(profile, connected.admin)
        run.extend(*checks)
    return facts


def second_phase(profile: Profile, timeout: float, source_topics: dict[str, int]) -> list[Check]:
    """The target's topic checks, once the source's selected topics are known."""
    return target.target_side(profile, timeout, source_topics)
