"""A side's first phase (``preflight/checks/sides.py``) over answering probes: the checks in the order they are
reported, and one cause, one failure (what a failed check stops is skipped, naming it, and is not asked)."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import connection, sides
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, Check
from secure_mirror.preflight.probes import clock, files, kafka_admin, kerberos, round_trip, tls
from secure_mirror.preflight.probes.clock import KdcClock
from secure_mirror.preflight.probes.kafka_admin import cluster as cluster_probes
from secure_mirror.preflight.probes.kafka_admin import groups as group_probes
from secure_mirror.preflight.probes.kafka_admin import topics as topic_probes
from secure_mirror.preflight.probes.kerberos import KeytabEntry

SIDES = ("source", "target")
KDC_DOWN = {"kind": "kdc-unreachable", "message": "no KDC of SOURCE.TEST answered", "fix": "check the KDCs"}


class Probes:
    """Every probe of the first phase answering as a healthy source would; ``asked`` records the network calls."""

    def __init__(self, monkeypatch):
        self.asked: list[str] = []
        self.login: dict = {"lifetime": 36000}
        self.ca: dict = {"count": 1}
        self.connect: dict = {
            "cluster": {"cluster_id": "c1", "nodes": [(1, "kafka.source.test", 9093)], "operations": []}
        }
        patch = monkeypatch.setattr
        patch(files, "keytab", lambda path, field: {"exists": True, "readable": True, "uid": 0, "exposure": None})
        patch(
            files,
            "krb5_conf",
            lambda given: {"path": "/k", "text": "[realms]\n SOURCE.TEST = {\n }\n TARGET.TEST = {\n }\n"},
        )
        patch(tls, "ca_bundle", lambda path: self.ca)
        patch(tls, "context_for", lambda settings: None)
        patch(
            clock,
            "measure_all",
            self.record("clock", lambda *a: {"measured": [KdcClock("k", 0.1, 1.0, 14)], "failed": []}),
        )
        keys = [KeytabEntry(f"mirror/mirror.{s}.test@{s.upper()}.TEST", 2, "aes256-cts-hmac-sha1-96") for s in SIDES]
        patch(kerberos, "keytab_entries", lambda path: {"entries": keys})
        patch(
            kerberos,
            "login",
            self.record("login", lambda *a: ("creds" if "lifetime" in self.login else None, self.login)),
        )
        patch(
            kerberos, "service_tickets", self.record("tickets", lambda c, s, hosts: {"hosts": hosts, "failure": None})
        )
        patch(tls, "handshakes", self.record("tls", lambda *a: {"seen": ["kafka.source.test:9093"], "refused": []}))
        patch(connection, "client_conf", lambda cluster, side: {})
        patch(kafka_admin, "Admin", lambda conf, timeout: "admin")
        patch(kafka_admin, "said", lambda admin: [])
        patch(cluster_probes, "connect", self.record("connect", lambda admin: self.connect))
        patch(
            cluster_probes,
            "each_broker",
            self.record(
                "brokers",
                lambda conf, nodes, t: [{"node": n, "server": f"{h}:{p}", "error": None} for n, h, p in nodes],
            ),
        )
        patch(
            round_trip,
            "measure",
            self.record(
                "round-trip",
                lambda servers, context, t: {f"{h}:{p}": {"ms": 0.2, "samples": [0.2]} for h, p in servers},
            ),
        )
        patch(round_trip, "receive_buffer_max", lambda: 32 * 1024 * 1024)
        patch(topic_probes, "list_topics", self.record("topics", lambda admin: {"orders.eu": 3, "payments": 1}))
        described = {"partitions": 3, "operations": ["DESCRIBE", "READ"]}
        patch(topic_probes, "describe_topics", lambda admin, names: {n: described for n in names})
        patch(group_probes, "describe_group", lambda admin, group: {"operations": ["READ"]})

    def record(self, name, answer):
        def called(*args):
            self.asked.append(name)
            return answer(*args)

        return called


def reported(facts) -> list[tuple[str, str]]:
    return [(c.id, c.status) for c in facts.checks]


FILES = [
    ("source.config.weak-settings", PASS),
    ("source.files.keytab", PASS),
    ("source.kerberos.krb5-conf", PASS),
    ("source.files.ca", PASS),
    ("source.kerberos.clock", PASS),
    ("source.kerberos.keytab", PASS),
]


def test_a_healthy_source(monkeypatch, profile):
    probes = Probes(monkeypatch)
    facts = sides.first_phase(profile, "source", 1.0, None)
    assert reported(facts) == [
        *FILES,
        ("source.kerberos.initial-ticket", PASS),
        ("source.kerberos.service-ticket", PASS),
        ("source.tls.certificate", PASS),
        ("source.kafka.connect", PASS),
        ("source.kerberos.broker-tickets", PASS),
        ("source.kafka.brokers", PASS),
        ("source.kafka.round-trip", PASS),
        ("source.topics.selection", PASS),
        ("source.acl.topic-describe", PASS),
        ("source.acl.topic-read", PASS),
        ("source.acl.group-read", PASS),
    ]
    assert (facts.topics, facts.hosts) == ({"orders.eu": 3, "payments": 3}, ["kafka.source.test"])
    assert probes.asked == ["clock", "login", "tickets", "tls", "connect", "tls", "brokers", "round-trip", "topics"]


def test_a_target_describes_the_topics_it_already_has_in_its_first_phase(monkeypatch, profile):
    """No check yet (the target's topic checks need the source's topics): the descriptions of the target topics the
    identity sees that the selection would write, for the second phase, asked while the source lists its topics."""
    probes = Probes(monkeypatch)
    monkeypatch.setattr(
        topic_probes, "list_topics", probes.record("topics", lambda admin: {"src.orders.eu": 3, "x": 1})
    )
    facts = sides.first_phase(profile, "target", 1.0, None)
    assert facts.checks[-1].id == "target.kafka.brokers" and facts.topics is None
    assert facts.described == {"src.orders.eu": {"partitions": 3, "operations": ["DESCRIBE", "READ"]}}
    # tickets: its brokers beyond the bootstrap ones; then TLS and a login with each broker the metadata names
    assert probes.asked[-5:] == ["connect", "tickets", "tls", "brokers", "topics"]


def test_a_stopped_kdc_fails_the_ticket_and_skips_the_connection(monkeypatch, profile):
    probes = Probes(monkeypatch)
    probes.login = {"failure": KDC_DOWN}
    facts = sides.first_phase(profile, "source", 1.0, None)
    assert reported(facts) == [
        *FILES,
        ("source.kerberos.initial-ticket", FAIL),
        ("source.tls.certificate", PASS),
        ("source.kafka.connect", SKIPPED),
    ]
    assert facts.checks[-1] == Check(
        "source.kafka.connect", SKIPPED, "skipped: needs source.kerberos.initial-ticket to pass"
    )
    assert probes.asked == ["clock", "login", "tls"] and facts.topics is None


def test_a_bad_ca_skips_the_handshake_and_the_connection(monkeypatch, profile):
    probes = Probes(monkeypatch)
    probes.ca = {"error": "no certificate"}
    facts = sides.first_phase(profile, "source", 1.0, None)
    assert reported(facts)[-3:] == [
        ("source.kerberos.service-ticket", PASS),
        ("source.tls.certificate", SKIPPED),
        ("source.kafka.connect", SKIPPED),
    ]
    assert facts.checks[-2].finding == "skipped: needs source.files.ca to pass"
    assert facts.checks[-1].finding == "skipped: needs source.tls.certificate to pass"
    assert "tls" not in probes.asked and "connect" not in probes.asked


@pytest.mark.parametrize("side", ["source", "target"])
def test_a_refused_connection_stops_the_side(monkeypatch, profile, side):
    probes = Probes(monkeypatch)
    probes.connect = {"error": "SASL authentication error", "librdkafka": ["SASL authentication error"]}
    facts = sides.first_phase(profile, side, 1.0, None)
    assert facts.checks[-1].id == f"{side}.kafka.connect" and facts.checks[-1].status == FAIL
    assert (facts.topics, facts.hosts) == (None, [])
    assert probes.asked[-1] == "connect"
