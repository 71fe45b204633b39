"""Issue 40, point 5: re-login over long runs, on three brokers a side whose connections must authenticate again.

Kerberos does not end an authenticated connection when its ticket expires, so a client proves that it logged in
again only when it must authenticate again. This module's sandbox (its own: ``sandbox up --brokers 3
--ticket-lifetime 2m --reauth-ms 60000``) makes that happen all the time: every ticket of both realms lives
``LIFETIME`` seconds (the KDC's ``max_life``) and the brokers' ``connections.max.reauth.ms`` (KIP-368) has every
open connection authenticate again within ``REAUTH_MS``, with whatever credentials its client holds by then.

An at_least_once and an exactly_once mirror job run at once, each as principals of its own on both sides (so the
KDC's log tells the two JVMs' logins apart), over a topic of ``PARTITIONS`` partitions with replication factor 3,
fed by a steady idempotent producer, for ``WINDOWS`` ticket lifetimes after the job's first login. Every
``POLL`` seconds a confluent-kafka reader (the target's admin) reads the end offsets of the target topic's
partitions; at the end each topic is read read_committed to its partitions' ends (``harness.count_sequences``).
What must hold, for each job:

- 0 records lost, 0 duplicated, the job still running and never restarted;
- in every lifetime window ``[first login + k * LIFETIME, first login + (k + 1) * LIFETIME)``, records arrived on
  the partitions led by each of the three target brokers (the windows from k = 1 begin when the ticket of the
  previous one has expired, so every connection has re-authenticated with a ticket of a later login);
- the KDC issued service tickets for each target broker (``kafka/kafka-N.target.test``) to the job's target
  principal with TGTs of at least ``WINDOWS`` different logins (the TGS_REQ lines' ``authtime``), so Kafka's client
  logged in again (its KerberosLogin refresh thread, at about 80% of a ticket's life, never sooner than 60 s after
  the previous login) and used the new tickets on every broker. The job's own Kerberos watch
  (``run/login_watch.py``) logs in too, but asks for no service ticket.

A job whose Kafka clients log in once and never again (``sasl.login.class`` Kafka's DefaultLogin, which has no
refresh thread, put into the job's GSSAPI settings) fails this test: its connections were "terminated during
authentication" once the first tickets had expired (625 and 244 such lines in the two jobs' logs), both queries
failed (``Timed out waiting for a node assignment. Call: createTopics``) and no batch was ever committed.
Marked ``slow`` (its own three-broker sandbox, about 3 minutes to start on an idle machine, then over 6 minutes of
mirroring): ``-m "reliability and slow"`` runs it.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import pytest

from secure_mirror.sandbox import procs
from secure_mirror.sandbox.sink_jar import sink_conf

from .conftest import DETAILS
from .harness import MirrorUnderLoad, sandbox_of_its_own

pytestmark = [pytest.mark.reliability, pytest.mark.sandbox, pytest.mark.spark, pytest.mark.slow]

LIFETIME = 120  # seconds every ticket lives (the KDC's max_life, "2m")
REAUTH_MS = 60_000  # the brokers' connections.max.reauth.ms
WINDOWS = 3  # ticket lifetimes watched after the job's first login: two expiries with writes after each
PARTITIONS = 3  # a partition led by each target broker (the job creates the target topic, replication factor 3)
RATE = 20.0  # records/s of each job's producer
POLL = 10.0  # seconds between two reads of the target's end offsets
GUARANTEES = ("at_least_once", "exactly_once")


@pytest.fixture(scope="module")
def reauth_sandbox(tmp_path_factory):
    options = {"brokers": 3, "ticket_lifetime": f"{LIFETIME // 60}m", "reauth_ms": REAUTH_MS}
    with sandbox_of_its_own(tmp_path_factory, "relogin", **options) as sb:
        yield sb


class JobIdentities:
    """A principal of the job's own on each side (a keytab each, in ``folder``), and what the KDC's log says of
    them: its logins (AS_REQ) and the service tickets it was issued (TGS_REQ) with the authtime of the TGT used."""

    def __init__(self, sb, folder: Path, tag: str):
        self.sb = sb
        self.principals = {
            side: f"rl{tag}{uuid.uuid4().hex[:6]}/mirror.{s.domain}@{s.realm}" for side, s in sb.sides.items()
        }
        self.keytabs = {side: folder / f"{side}-relogin.keytab" for side in self.principals}
        for side, principal in self.principals.items():
            sb.kdc().add_principal(principal, self.keytabs[side])
        self.log_start = sb.kdc().log.stat().st_size

    def hook(self, guarantee: str, folder: Path):
        def apply(data: dict) -> None:
            data["mirror"].setdefault("delivery", {})["guarantee"] = guarantee
            data["mirror"]["spark"].setdefault("conf", {}).update(sink_conf(folder))
            for side, principal in self.principals.items():
                data[side]["sasl"] |= {"principal": principal, "keytab": str(self.keytabs[side])}

        return apply

    def _lines(self, side: str, what: str) -> list[str]:
        text = procs.log_since(self.sb.kdc().log, self.log_start)
        return [line for line in text.splitlines() if what in line and f" {self.principals[side]} for " in line]

    def logins(self, side: str) -> list[int]:
        """When each of the job's AS exchanges (its Kafka clients' and its own watch's) was answered: authtime."""
        return [int(m.group(1)) for line in self._lines(side, "AS_REQ") if (m := re.search(r"authtime (\d+)", line))]

    def service_tickets(self, side: str) -> dict[str, set[int]]:
        """Service principal -> the authtimes of the TGTs the job asked its tickets with."""
        found: dict[str, set[int]] = defaultdict(set)
        for line in self._lines(side, "TGS_REQ"):
            m = re.search(r"authtime (\d+).* for (\S+)", line)
            if m and "ISSUE" in line:
                found[m.group(2).rstrip(",")].add(int(m.group(1)))
        return dict(found)


def target_ends(conf: dict, topic: str) -> dict[int, int]:
    """partition -> the end offset of ``topic``'s partition, read by confluent-kafka (in an identity's process)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": "relogin-ends", "enable.auto.commit": False})
    try:
        metadata = consumer.list_topics(topic, timeout=30)
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in metadata.topics[topic].partitions
        }
    finally:
        consumer.close()


def _arrived(polls: list[tuple[float, dict[int, int]]], partitions: list[int], start: float, end: float) -> int:
    """Records that reached ``partitions`` between ``start`` and ``end``, from the reads of the end offsets (each
    bound taken at the last read at or before it; none yet: 0)."""

    def at(moment: float) -> int:
        before = [ends for when, ends in polls if when <= moment]
        return sum(before[-1].get(p, 0) for p in partitions) if before else 0

    return at(end) - at(start)


def test_the_job_writes_to_every_broker_through_re_logins_and_re_authentication(reauth_sandbox, tmp_path):
    sb = reauth_sandbox
    started = time.monotonic()
    judged: dict[str, tuple[str, list[str]]] = {}
    with ExitStack() as stack:
        identities, loads = {}, {}
        for g in GUARANTEES:
            folder = tmp_path / g
            folder.mkdir()
            identities[g] = JobIdentities(sb, folder, g[:2])
            loads[g] = stack.enter_context(
                MirrorUnderLoad(
                    sb, folder, partitions=PARTITIONS, rate=RATE, profile_hook=identities[g].hook(g, folder), name="rl"
                )
            )
        for load in loads.values():
            load.start_job()
        for load in loads.values():
            load.wait_for_batches(1, timeout=400)
        first = {g: min(ids.logins("target")) for g, ids in identities.items()}
        leaders = {
            g: {p["partition"]: p["leader"] for p in sb.partitions("target", [load.target_topic])}
            for g, load in loads.items()
        }
        polls: dict[str, list[tuple[float, dict[int, int]]]] = {g: [] for g in GUARANTEES}
        until = max(first.values()) + WINDOWS * LIFETIME + POLL
        while time.time() < until:
            for g, load in loads.items():
                load._fail_if_ended("the last ticket lifetime was over")
                polls[g].append((time.time(), sb.admin("target", target_ends, load.target_topic)))
            time.sleep(POLL)
        now = {
            g: {p["partition"]: p["leader"] for p in sb.partitions("target", [load.target_topic])}
            for g, load in loads.items()
        }
        judged = {g: _judge(g, identities[g], leaders[g], now[g], polls[g], first[g]) for g in GUARANTEES}
        for g, (line, _failures) in judged.items():
            print(f"\nrelogin: {g}: {line}")
        failed = [f for _line, failures in judged.values() for f in failures]
        assert not failed, "\n".join(failed)  # before the drain: a job that stopped writing would only time out
        outcomes = {g: load.finish() for g, load in loads.items()}
    for g, outcome in outcomes.items():
        line = f"{judged[g][0]}; {outcome.text()}"
        print(f"relogin: {g}: {outcome.text()}")
        DETAILS.append(f"re-login over {WINDOWS} lifetimes of {LIFETIME} s, reauth {REAUTH_MS} ms: {g}: {line}")
    print(f"relogin: the case took {time.monotonic() - started:.0f} s")
    for g, outcome in outcomes.items():
        assert outcome.lost == outcome.duplicated == outcome.restarts == 0, f"{g}: {outcome.text()}"
        assert outcome.exit_codes == [0] and outcome.produced > RATE * WINDOWS * LIFETIME, f"{g}: {outcome.text()}"


def _judge(g, ids: JobIdentities, leaders: dict, now: dict, polls: list, first: int) -> tuple[str, list[str]]:
    """The figures of one job over the watched lifetimes, and what in them fails the claim."""
    by_broker = defaultdict(list)
    for partition, node in leaders.items():
        by_broker[node].append(partition)
    windows = {
        node: [_arrived(polls, parts, first + k * LIFETIME, first + (k + 1) * LIFETIME) for k in range(WINDOWS)]
        for node, parts in sorted(by_broker.items())
    }
    end = first + WINDOWS * LIFETIME  # the service tickets asked within the watched lifetimes (not by the drain)
    tickets = {
        service: sorted(t for t in times if t < end)
        for service, times in ids.service_tickets("target").items()
        if service.startswith("kafka/")
    }
    logins = sorted({t for t in ids.logins("target") if t < end})
    line = (
        f"target broker -> records arrived on the partitions it leads, per {LIFETIME} s ticket lifetime from the "
        f"first login: {windows}; logins at the KDC within them (target principal, the job's watch included): "
        f"{len(logins)}; service tickets asked with TGTs of these logins (seconds after the first): "
        f"{ {s.split('@')[0]: [t - first for t in times] for s, times in sorted(tickets.items())} }"
    )
    failures = []
    if sorted(windows) != [1, 2, 3]:
        failures.append(f"{g}: the target partitions are not led by every broker: {leaders}")
    if now != leaders:
        failures.append(f"{g}: a target partition's leader moved during the run: {leaders} -> {now}")
    for node, counts in windows.items():
        if not all(counts):
            failures.append(f"{g}: in a ticket lifetime no record reached target broker {node}'s partitions: {counts}")
    for node in (1, 2, 3):
        service = f"kafka/kafka-{node}.target.test@TARGET.TEST"
        if len(tickets.get(service, [])) < WINDOWS:
            failures.append(
                f"{g}: {service}'s tickets were asked with TGTs of {len(tickets.get(service, []))} logins in "
                f"{WINDOWS} lifetimes: the client did not log in again (or never authenticated again)"
            )
    return line, failures
