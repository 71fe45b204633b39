"""A side's checks in the order they run, in its identity's process: the first phase of each side (settings and
files, Kerberos, TLS, the connection and every broker it names, ``connect_phase``; then ``topics_phase``: on the
source the topic selection, on the target the topics it has; the runner asks for them apart). The target's second
phase, which needs the source's topics to name the target's, is ``target.target_side``.

A check whose prerequisite did not pass is reported as skipped, naming the prerequisite, so one cause yields one
failure: a stopped KDC fails ``<side>.kerberos.initial-ticket`` and skips what depends on it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from secure_mirror.preflight.checks import brokers, connection, kerberos, round_trip, settings, source, target
from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.model import Check
from secure_mirror.preflight.probes import kafka_admin
from secure_mirror.preflight.probes.kafka_admin import topics as topic_probes
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl


@dataclass
class SideFacts:
    """What a side's first phase hands back to the runner."""

    checks: list[Check]
    topics: dict[str, int] | None = None  # the source's selected topics -> partitions
    described: dict[str, topic_probes.TopicAnswer] = field(default_factory=dict)  # ``target.ask_existing``
    hosts: list[str] = field(default_factory=list)
    seconds: float = 0.0  # how long the phase took in its worker
    connected: bool = False  # the side's connection passed: its ``topics_phase`` can run


# The side's admin client, from ``connect_phase`` to ``topics_phase`` (both run in the side's own worker process).
_KEPT: dict[str, kafka_admin.Admin] = {}


def first_phase(profile: Profile, side: Side, timeout: float, krb5_conf: str | None) -> SideFacts:
    """A side's whole first phase in one call: ``connect_phase`` then, once connected, ``topics_phase``."""
    facts = connect_phase(profile, side, timeout, krb5_conf)
    if facts.connected:
        topics = topics_phase(profile, side)
        facts.checks += topics.checks
        facts.topics, facts.described = topics.topics, topics.described
        facts.seconds += topics.seconds
    return facts


def connect_phase(profile: Profile, side: Side, timeout: float, krb5_conf: str | None) -> SideFacts:
    """Settings and files, Kerberos, TLS and the connection. The runner learns from it whether librdkafka reached
    the side (for the Java client) while the side's topics are asked (``topics_phase``)."""
    started = time.monotonic()
    facts = _connect_phase(profile, side, timeout, krb5_conf)
    facts.seconds = time.monotonic() - started
    return facts


def topics_phase(profile: Profile, side: Side) -> SideFacts:
    """Over the connection ``connect_phase`` made: the source's topic checks and its selected topics; on the target,
    the descriptions of the topics it already has that the selection would write (``target.ask_existing``, for the
    second phase), asked while the source's are."""
    started = time.monotonic()
    admin = _KEPT.pop(side)
    if side == "source":
        checks, topics = source.source_topics(profile, admin)
        facts = SideFacts(checks, topics=topics)
    else:
        facts = SideFacts([], described=target.ask_existing(profile, admin))
    facts.seconds = time.monotonic() - started
    return facts


def _connect_phase(profile: Profile, side: Side, timeout: float, krb5_conf: str | None) -> SideFacts:
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
    facts.hosts, facts.connected = connected.hosts, True
    if creds is not None and isinstance(cluster.sasl, GssapiSasl):
        kerberos.broker_tickets(run, cluster, cluster.sasl, creds, connected.hosts)
    brokers.every_broker(run, cluster, connected.nodes, timeout)
    round_trip.measure(run, profile, cluster, connected.nodes, timeout)
    _KEPT[side] = connected.admin
    return facts
