"""Kerberos decisions (``preflight/checks/kerberos.py``), fed answers as ``probes.clock`` and ``probes.kerberos``
return them, and the order of the steps: one cause, one failure. No KDC."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks import kerberos
from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, UNVERIFIED, WARN, Check
from secure_mirror.preflight.probes.clock import KdcClock
from secure_mirror.preflight.probes.kerberos import KeytabEntry

PRINCIPAL = "mirror/mirror.source.test@SOURCE.TEST"
KDC = "127.0.0.1:41001"
NOT_MEASURED = "cannot ask the KDC 127.0.0.2:88: [Errno 111] Connection refused"
CLOCK_FIX = (
    "synchronise this machine, the KDCs and the brokers with NTP (chronyc tracking shows the offset); "
    "Kerberos refuses clocks more than 300 s apart"
)


def clocks(*measured: KdcClock, failed=()) -> dict:
    return {"measured": list(measured), "failed": list(failed)}


def details(*measured: KdcClock, failed=()) -> dict:
    return {"allowed_skew_s": 300.0, "kdcs": [vars(m) for m in measured], "not_measured": list(failed)}


def test_the_kdcs_declared_in_the_profile_are_measured(profile):
    assert kerberos.declared_kdcs(profile, "SOURCE.TEST") == [KDC]
    assert kerberos.declared_kdcs(profile, "ELSEWHERE.TEST") is None


def test_kdcs_from_krb5_conf_are_not_measured():
    assert kerberos.clock_check("source", "SOURCE.TEST", None, None) == Check(
        "source.kerberos.clock",
        SKIPPED,
        "the KDCs of SOURCE.TEST come from krb5.conf, not the profile: their clocks were not measured",
        "declare kerberos.realms.SOURCE.TEST.kdcs in the profile to have them measured",
    )


def test_no_kdc_telling_its_time_is_unverified():
    answer = clocks(failed=[NOT_MEASURED])
    assert kerberos.clock_check("source", "SOURCE.TEST", [KDC], answer) == Check(
        "source.kerberos.clock",
        UNVERIFIED,
        f"no KDC of SOURCE.TEST told its time ({NOT_MEASURED}): the clock skew is not known",
        "check the KDCs answer on TCP or UDP from this machine",
        details=details(failed=[NOT_MEASURED]),
    )


def test_a_clock_within_the_skew_passes_and_counts_the_kdcs_measured():
    near = KdcClock(KDC, 0.25, 1.1, 14)
    answer = clocks(near, failed=[NOT_MEASURED])
    assert kerberos.clock_check("source", "SOURCE.TEST", [KDC, "127.0.0.2:88"], answer) == Check(
        "source.kerberos.clock",
        PASS,
        f"the KDC {KDC} of SOURCE.TEST is 0.2 s ahead of this machine (±1.1 s), within the 300 s Kerberos allows; "
        "1 of 2 KDC(s) measured (brokers' clocks are not measured: Kafka's protocol does not show them)",
        details=details(near, failed=[NOT_MEASURED]),
    )


@pytest.mark.parametrize(
    ("offset", "uncertainty", "status", "words"),
    [
        (-160.0, 1.0, WARN, "160.0 s behind this machine (±1.0 s): close to the 300 s Kerberos allows"),
        (
            400.0,
            1.5,
            FAIL,
            "400.0 s ahead of this machine (±1.5 s): more than the 300 s Kerberos allows, so Kafka's logins will be "
            "refused",
        ),
        (301.0, 2.0, WARN, "301.0 s ahead of this machine (±2.0 s): close to the 300 s Kerberos allows"),
    ],
)
def test_the_worst_kdc_decides_and_the_uncertainty_counts_for_it(offset, uncertainty, status, words):
    worst, other = KdcClock("127.0.0.2:88", offset, uncertainty, 14), KdcClock(KDC, 3.0, 1.0, 14)
    answer = clocks(other, worst)
    assert kerberos.clock_check("source", "SOURCE.TEST", [KDC, "127.0.0.2:88"], answer) == Check(
        "source.kerberos.clock",
        status,
        f"the KDC 127.0.0.2:88 of SOURCE.TEST is {words}",
        CLOCK_FIX,
        details=details(other, worst),
    )


# ---- the keytab and the tickets ----------------------------------------------------------------------------------
def test_keytab(profile):
    sasl = profile.source.sasl
    keytab = sasl.keytab
    assert kerberos.keytab_check("source", sasl, {"error": "not an MIT keytab (version 0x0502)"}) == Check(
        "source.kerberos.keytab",
        FAIL,
        f"{keytab} is not a keytab (not an MIT keytab (version 0x0502))",
        "export the keytab again with kadmin ktadd",
    )
    other = {"entries": [KeytabEntry("other@SOURCE.TEST", 1, "aes256-cts-hmac-sha1-96")]}
    assert kerberos.keytab_check("source", sasl, other) == Check(
        "source.kerberos.keytab",
        FAIL,
        f"{keytab} holds no key for {PRINCIPAL}",
        f"export the keys (kadmin: ktadd -k {keytab} {PRINCIPAL}) or fix source.sasl.principal",
    )
    weak = {"entries": [KeytabEntry(PRINCIPAL, 2, "des3-cbc-sha1"), KeytabEntry(PRINCIPAL, 2, "arcfour-hmac")]}
    assert kerberos.keytab_check("source", sasl, weak) == Check(
        "source.kerberos.keytab",
        WARN,
        f"{PRINCIPAL}: only weak encryption types (arcfour-hmac, des3-cbc-sha1)",
        "re-key the principal with aes256-cts-hmac-sha1-96",
        details={"kvnos": [2], "enctypes": ["arcfour-hmac", "des3-cbc-sha1"]},
    )
    strong = {
        "entries": [
            KeytabEntry(PRINCIPAL, 3, "aes256-cts-hmac-sha1-96"),
            KeytabEntry(PRINCIPAL, 2, "aes256-cts-hmac-sha1-96"),
            KeytabEntry(PRINCIPAL, 3, "arcfour-hmac"),
            KeytabEntry("other@SOURCE.TEST", 9, "des-cbc-crc"),
        ]
    }
    assert kerberos.keytab_check("source", sasl, strong) == Check(
        "source.kerberos.keytab",
        PASS,
        f"{PRINCIPAL}: key version(s) 2, 3, aes256-cts-hmac-sha1-96, arcfour-hmac",
        details={"kvnos": [2, 3], "enctypes": ["aes256-cts-hmac-sha1-96", "arcfour-hmac"]},
    )


WRONG_KEY = {"kind": "wrong-key", "message": "the keys do not match the KDC's", "fix": "export a fresh keytab"}


def test_initial_ticket(profile):
    sasl = profile.source.sasl
    assert kerberos.initial_ticket_check("source", sasl, {"failure": WRONG_KEY}) == Check(
        "source.kerberos.initial-ticket",
        FAIL,
        "the keys do not match the KDC's",
        "export a fresh keytab",
        details={"kind": "wrong-key"},
    )
    assert kerberos.initial_ticket_check("source", sasl, {"lifetime": 10 * 3600 + 5 * 60 + 59}) == Check(
        "source.kerberos.initial-ticket",
        PASS,
        f"ticket for {PRINCIPAL} from the KDC of SOURCE.TEST, valid 10h05m (renewed from the keytab, not by renewal)",
        details={"lifetime_s": 36359},
    )


def test_service_tickets(profile):
    sasl = profile.source.sasl
    answer = {"hosts": ["a.source.test", "b.source.test"], "failure": None}
    assert kerberos.service_ticket_check("source", "kerberos.service-ticket", sasl, answer) == Check(
        "source.kerberos.service-ticket", PASS, "service tickets for kafka/a.source.test, kafka/b.source.test"
    )
    failure = {"kind": "server-not-found", "message": "no kafka/b", "fix": "check the SPN", "host": "b.source.test"}
    answer = {"hosts": ["a.source.test", "b.source.test"], "failure": failure}
    assert kerberos.service_ticket_check("source", "kerberos.service-ticket", sasl, answer) == Check(
        "source.kerberos.service-ticket",
        FAIL,
        "no kafka/b",
        "check the SPN",
        details={"kind": "server-not-found", "host": "b.source.test"},
    )


def test_broker_tickets_only_for_brokers_beyond_the_bootstrap_servers(profile):
    cluster, sasl = profile.source, profile.source.sasl
    assert kerberos.broker_hosts_beyond_bootstrap(cluster, ["kafka.source.test", "b2.source.test"]) == [
        "b2.source.test"
    ]
    assert kerberos.broker_tickets_check("source", sasl, ["kafka.source.test"], None) == Check(
        "source.kerberos.broker-tickets",
        PASS,
        "the cluster's brokers (kafka.source.test) are the bootstrap servers already checked",
    )
    answer = {"hosts": ["b2.source.test"], "failure": None}
    assert kerberos.broker_tickets_check("source", sasl, ["kafka.source.test", "b2.source.test"], answer) == Check(
        "source.kerberos.broker-tickets", PASS, "service tickets for kafka/b2.source.test"
    )


# ---- the steps: one cause, one failure ----------------------------------------------------------------------------
class Kdc:
    """``probes.kerberos`` answering from dicts, recording what was asked."""

    def __init__(self, monkeypatch, keytab=None, login=None):
        self.asked: list[str] = []
        entries = keytab or {"entries": [KeytabEntry(PRINCIPAL, 2, "aes256-cts-hmac-sha1-96")]}
        answer = login or {"lifetime": 36000}
        creds = "creds" if "lifetime" in answer else None
        monkeypatch.setattr(kerberos.kerberos, "keytab_entries", self.record("keytab", lambda path: entries))
        monkeypatch.setattr(kerberos.kerberos, "login", self.record("login", lambda *a: (creds, answer)))
        tickets = self.record("service", lambda creds, service, hosts: {"hosts": sorted(hosts), "failure": None})
        monkeypatch.setattr(kerberos.kerberos, "service_tickets", tickets)

    def record(self, name, answer):
        def called(*args):
            self.asked.append(name)
            return answer(*args)

        return called


def _run(*earlier: tuple[str, str]) -> SideChecks:
    run = SideChecks("source")
    for what, status in earlier:
        run.add(what, status, "earlier")
    return run


def _statuses(run: SideChecks) -> list[tuple[str, str]]:
    return [(c.id, c.status) for c in run.checks if c.finding != "earlier"]


def test_all_tickets(monkeypatch, profile):
    kdc = Kdc(monkeypatch)
    run = _run(("files.keytab", PASS), ("kerberos.krb5-conf", PASS))
    assert kerberos.tickets(run, profile.source, profile.source.sasl) == "creds"
    assert _statuses(run) == [
        ("source.kerberos.keytab", PASS),
        ("source.kerberos.initial-ticket", PASS),
        ("source.kerberos.service-ticket", PASS),
    ]
    assert kdc.asked == ["keytab", "login", "service"]


def test_a_keytab_file_that_failed_skips_the_keytab_and_asks_nothing(monkeypatch, profile):
    kdc = Kdc(monkeypatch)
    run = _run(("files.keytab", FAIL), ("kerberos.krb5-conf", PASS))
    assert kerberos.tickets(run, profile.source, profile.source.sasl) is None
    assert run.checks[-1] == Check("source.kerberos.keytab", SKIPPED, "skipped: needs source.files.keytab to pass")
    assert _statuses(run) == [("source.kerberos.keytab", SKIPPED)] and kdc.asked == []


def test_a_warned_keytab_file_does_not_block(monkeypatch, profile):
    Kdc(monkeypatch)
    run = _run(("files.keytab", WARN), ("kerberos.krb5-conf", PASS))
    assert kerberos.tickets(run, profile.source, profile.source.sasl) == "creds"


def test_a_keytab_without_the_key_asks_no_ticket(monkeypatch, profile):
    kdc = Kdc(monkeypatch, keytab={"entries": []})
    run = _run(("files.keytab", PASS), ("kerberos.krb5-conf", PASS))
    assert kerberos.tickets(run, profile.source, profile.source.sasl) is None
    assert _statuses(run) == [("source.kerberos.keytab", FAIL)] and kdc.asked == ["keytab"]


def test_an_unreadable_krb5_conf_skips_the_ticket(monkeypatch, profile):
    kdc = Kdc(monkeypatch)
    run = _run(("files.keytab", PASS), ("kerberos.krb5-conf", FAIL))
    kerberos.tickets(run, profile.source, profile.source.sasl)
    assert run.checks[-1] == Check(
        "source.kerberos.initial-ticket", SKIPPED, "skipped: needs source.kerberos.krb5-conf to pass"
    )
    assert kdc.asked == ["keytab"]


def test_a_refused_ticket_asks_no_service_ticket(monkeypatch, profile):
    kdc = Kdc(monkeypatch, login={"failure": WRONG_KEY})
    run = _run(("files.keytab", PASS), ("kerberos.krb5-conf", PASS))
    assert kerberos.tickets(run, profile.source, profile.source.sasl) is None
    assert _statuses(run) == [("source.kerberos.keytab", PASS), ("source.kerberos.initial-ticket", FAIL)]
    assert kdc.asked == ["keytab", "login"]
