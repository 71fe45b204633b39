"""Every broker the metadata names (``preflight/checks/brokers.py``): a certificate or a login refused by one broker
fails and names it with the fix; a broker that could not be reached warns; nothing is asked when the brokers' tickets
failed. Fed answers as ``probes.tls.handshakes`` and ``probes.kafka_admin.cluster.each_broker`` return them."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import brokers
from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, WARN, Check

NODES = [(1, "kafka-1.source.test", 9093), (2, "kafka-2.source.test", 9093), (3, "kafka-3.source.test", 9093)]
SEEN = {"seen": [f"{h}:{p}" for _, h, p in NODES], "refused": []}
GSSAPI_REFUSED = (
    "sasl_ssl://kafka-2.source.test:9093/bootstrap: SASL authentication error: Authentication failed during "
    "authentication due to invalid credentials with SASL mechanism GSSAPI"
)


def answered(**errors: str) -> list[dict]:
    return [{"node": n, "server": f"{h}:{p}", "error": errors.get(f"b{n}")} for n, h, p in NODES]


def test_every_broker_answered():
    found = brokers.brokers_check("source", None, NODES, SEEN, answered())  # type: ignore[arg-type]
    assert found.status == PASS and found.id == "source.kafka.brokers"
    assert found.finding == (
        "each of the 3 broker(s) the metadata names (1 kafka-1.source.test:9093, 2 kafka-2.source.test:9093, "
        "3 kafka-3.source.test:9093) completed TLS with a certificate naming its host and accepted this identity's login"
    )


def test_a_broker_refusing_the_login_fails_naming_it_and_its_principal(profile):
    found = brokers.brokers_check("source", profile.source, NODES, SEEN, answered(b2=GSSAPI_REFUSED))
    assert found.status == FAIL
    assert (
        "1 of the 3 brokers" in found.finding
        and "broker 2 (kafka-2.source.test:9093): refused the login" in found.finding
    )
    assert "kafka/kafka-2.source.test" in found.fix and "ktadd" in found.fix
    assert found.details["problems"] == [{"node": 2, "server": "kafka-2.source.test:9093", "kind": "login"}]


def test_a_certificate_not_naming_its_broker_fails_once():
    refused = {
        "kind": "hostname",
        "message": "the certificate of kafka-3.source.test does not name kafka-3.source.test",
        "fix": "re-issue it",
        "server": "kafka-3.source.test:9093",
    }
    handshakes = {"seen": SEEN["seen"][:2], "refused": [refused]}
    logins = answered(b3="SSL handshake failed: certificate verify failed")  # the same cause, said once
    found = brokers.brokers_check("source", None, NODES, handshakes, logins)  # type: ignore[arg-type]
    assert (found.status, found.fix) == (FAIL, "re-issue it")
    assert found.finding.endswith("broker 3 (kafka-3.source.test:9093): " + refused["message"])
    assert [p["kind"] for p in found.details["problems"]] == ["certificate"]


def test_a_broker_that_did_not_answer_warns(profile):
    found = brokers.brokers_check(
        "source", profile.source, NODES, SEEN, answered(b1="Connect to ... failed: Connection refused")
    )
    assert found.status == WARN
    assert found.finding.startswith("broker 1 (kafka-1.source.test:9093): did not answer: Connect to")
    assert "run pre-flight again" in found.fix


def test_a_refusal_outranks_an_unreached_broker(profile):
    found = brokers.brokers_check(
        "source", profile.source, NODES, SEEN, answered(b1="Connection refused", b2=GSSAPI_REFUSED)
    )
    assert found.status == FAIL and "broker 1" not in found.finding and "broker 2" in found.finding


def test_nothing_is_asked_when_the_brokers_tickets_failed(profile, monkeypatch):
    monkeypatch.setattr(brokers.cluster_probes, "each_broker", pytest.fail)
    run = SideChecks("source")
    run.add("kerberos.broker-tickets", FAIL, "no kafka/kafka-2.source.test")
    brokers.every_broker(run, profile.source, NODES, 1.0)
    assert run.checks[-1] == Check(
        "source.kafka.brokers", SKIPPED, "skipped: needs source.kerberos.broker-tickets to pass"
    )
