"""The connection's decisions (``preflight/checks/connection.py``): TLS trust, librdkafka's connection and Kafka's
Java client, fed answers as ``probes.tls``, ``probes.kafka_admin`` and ``probes.java_client`` return them."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import connection
from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, UNVERIFIED, WARN, Check
from tests.support import profiles as pf

DOWN = {"kind": "refused", "message": "nothing listens on c:9093 (connection refused)", "fix": "-", "server": "c:9093"}


def test_tls_certificate():
    assert connection.tls_check("source", {"seen": ["a:9093", "b:9093"], "refused": []}) == Check(
        "source.tls.certificate", PASS, "a:9093, b:9093: certificate chains to the configured CA and names the host"
    )
    failure = {"kind": "untrusted", "message": "does not chain", "fix": "set tls.ca", "server": "b:9093"}
    assert connection.tls_check("source", {"seen": ["a:9093"], "refused": [DOWN, failure]}) == Check(
        "source.tls.certificate",
        FAIL,
        "does not chain",
        "set tls.ca",
        details={"kind": "untrusted", "server": "b:9093"},
    )


def test_a_bootstrap_server_down_warns_naming_it_while_another_answered():
    warned = connection.tls_check("source", {"seen": ["a:9093"], "refused": [DOWN]})
    assert (warned.status, warned.details) == (WARN, {"unreached": ["c:9093"]})
    assert "c:9093 could not be reached (nothing listens on c:9093" in warned.finding
    assert warned.finding.startswith("a:9093: certificate chains") and "bootstrap_servers" in warned.fix
    assert connection.tls_check("source", {"seen": [], "refused": [DOWN]}) == Check(
        "source.tls.certificate", FAIL, DOWN["message"], "-", details={"kind": "refused", "server": "c:9093"}
    )


def test_connected_and_authenticated(profile):
    nodes = [(1, "kafka.source.test", 9093), (2, "b2.source.test", 9093)]
    info = {"cluster_id": "abc", "nodes": nodes, "operations": None}
    assert connection.connect_check("source", profile.source, 5.0, {"cluster": info}) == Check(
        "source.kafka.connect", PASS, "authenticated as User:mirror to cluster abc (2 broker(s))", details=info
    )


@pytest.mark.parametrize(
    ("reason", "finding", "fix"),
    [
        (
            "SASL authentication error: Authentication failed",
            "authentication failed: SASL authentication error: Authentication failed",
            "check the mechanism and credentials in the profile's sasl section",
        ),
        (
            "SSL handshake failed: certificate verify failed",
            "TLS failed: SSL handshake failed: certificate verify failed",
            "check tls.ca and security_protocol against the broker's listener",
        ),
        (
            "Connection refused",
            "no answer from kafka.source.test:9093 within 2.5s: Connection refused",
            "check bootstrap_servers (host and port of the listener) and the firewall",
        ),
    ],
)
def test_a_connection_that_fails_says_why(profile, reason, finding, fix):
    answer = {"error": reason, "librdkafka": [reason]}
    assert connection.connect_check("source", profile.source, 2.5, answer) == Check(
        "source.kafka.connect", FAIL, finding, fix, details={"librdkafka": [reason]}
    )


def test_a_failed_prerequisite_skips_the_connection_without_asking(profile, monkeypatch):
    monkeypatch.setattr(connection.kafka_admin, "Admin", pytest.fail)
    run = SideChecks("source")
    run.add("kerberos.service-ticket", FAIL, "no kafka/host")
    assert connection.connect(run, profile.source, 1.0) is None
    assert run.checks[-1] == Check(
        "source.kafka.connect", SKIPPED, "skipped: needs source.kerberos.service-ticket to pass"
    )


JAVA_FIX = (
    "Spark's job and MirrorMaker 2 would fail the same way at start; fix the source setting the message names (the "
    "file is source/client.properties of secure-mirror render)"
)


@pytest.mark.parametrize(
    ("operations", "words"),
    [
        ("-", "none"),
        ("?", "not reported (a broker older than Kafka 2.3)"),
        ("DESCRIBE,IDEMPOTENT_WRITE", "DESCRIBE, IDEMPOTENT_WRITE"),
    ],
)
def test_the_java_client_reached_the_cluster(profile, operations, words):
    assert connection.java_client_check(profile, "source", ["ok", "abc", "1", operations]) == Check(
        "source.java.client",
        PASS,
        "Kafka's Java client (as Spark and MirrorMaker 2 run it) loaded the rendered client.properties, authenticated "
        f"and reached cluster abc (1 broker(s)); cluster operations allowed: {words}",
    )


def test_the_java_client_missing_is_unverified(profile):
    assert connection.java_client_check(profile, "target", ["missing", "Java is not installed here"]) == Check(
        "target.java.client",
        UNVERIFIED,
        "the Java client could not be tried: Java is not installed here",
        "run scripts/setup (Java 17 and Kafka's jars); the Spark job needs them too",
    )


@pytest.mark.parametrize(("kind", "message"), [("TimeoutException", "null"), ("Timeout", "no answer within 68s")])
def test_the_java_client_timing_out_is_unverified_never_a_failure(profile, kind, message):
    """A timeout is not a refusal: under load the client's describeCluster may not be answered in time (CI saw it)."""
    found = connection.java_client_check(profile, "target", ["error", kind, message])
    assert found == Check(
        "target.java.client",
        UNVERIFIED,
        f"Kafka's Java client got no answer in time ({kind}: {message}), so whether it accepts the rendered "
        "client.properties was not shown",
        "run pre-flight again, with a longer --timeout if the brokers or this machine are busy",
        details={"exception": kind},
    )


def test_the_java_client_failing_names_the_setting_without_its_secret(tmp_path):
    profile = pf.load(tmp_path, source=pf.password(tmp_path, "source", "SCRAM-SHA-512"))
    answer = ["error", "ConfigException", f"Invalid value {pf.PASSWORD} for sasl.jaas.config"]
    assert connection.java_client_check(profile, "source", answer) == Check(
        "source.java.client",
        FAIL,
        "Kafka's Java client failed where librdkafka succeeded: ConfigException: Invalid value [secret] for "
        "sasl.jaas.config",
        JAVA_FIX,
        details={"exception": "ConfigException"},
    )


def test_java_checks_cover_each_side_asked(profile):
    answers = {"source": ["ok", "abc", "1", "-"], "target": ["missing", "no Java"]}
    assert [(c.id, c.status) for c in connection.java_checks(profile, answers, ("source", "target"))] == [
        ("source.java.client", PASS),
        ("target.java.client", UNVERIFIED),
    ]
