"""Kerberos: the KDCs' clocks, the keytab's keys, the initial ticket and the brokers' service tickets. Asked through
``probes.clock`` and ``probes.kerberos``; judged by the pure ``*_check`` functions.

A keytab without the principal's key stops here (no ticket is asked for), and a refused initial ticket stops the
service tickets: one cause, one failure."""

from __future__ import annotations

from secure_mirror.preflight.checks.base import SideChecks, check
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, UNVERIFIED, WARN, Check
from secure_mirror.preflight.probes import Failed, clock, kerberos
from secure_mirror.preflight.probes.clock import DEFAULT_MAX_SKEW_S
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import GssapiSasl

CLOCK_FIX = (
    "synchronise this machine, the KDCs and the brokers with NTP (chronyc tracking shows the offset); "
    f"Kerberos refuses clocks more than {DEFAULT_MAX_SKEW_S:.0f} s apart"
)


# ---- the steps: ask, then judge -----------------------------------------------------------------------------------
def kdc_clocks(run: SideChecks, profile: Profile, sasl: GssapiSasl, timeout: float) -> None:
    """Each KDC's clock against ours (``probes/clock.py``): Kafka's Java client and the brokers do not adjust to a
    KDC's time as MIT's tools do, so a skew beyond the allowed one fails their logins."""
    kdcs = declared_kdcs(profile, sasl.realm)
    answer = None if kdcs is None else clock.measure_all(kdcs, sasl.principal, sasl.realm, timeout)
    run.extend(clock_check(run.side, sasl.realm, kdcs, answer))


def tickets(run: SideChecks, cluster: Cluster, sasl: GssapiSasl):
    """The keytab, the initial ticket and the bootstrap brokers' service tickets; the credentials, or None."""
    if run.blocked("kerberos.keytab", "files.keytab"):
        return None
    if run.extend(keytab_check(run.side, sasl, kerberos.keytab_entries(sasl.keytab))).status == FAIL:
        return None
    if run.blocked("kerberos.initial-ticket", "kerberos.krb5-conf"):
        return None
    creds, login = kerberos.login(sasl.principal, sasl.keytab, f"secure-mirror-preflight-{run.side}")
    run.extend(initial_ticket_check(run.side, sasl, login))
    if creds is None:
        return None
    answer = kerberos.service_tickets(creds, sasl.service_name, [h for h, _ in cluster.brokers])
    run.extend(service_ticket_check(run.side, "kerberos.service-ticket", sasl, answer))
    return creds


def broker_tickets(run: SideChecks, cluster: Cluster, sasl: GssapiSasl, creds, hosts: list[str]) -> None:
    """Service tickets for the brokers the cluster names beyond the bootstrap servers."""
    extra = broker_hosts_beyond_bootstrap(cluster, hosts)
    answer = kerberos.service_tickets(creds, sasl.service_name, extra) if extra else None
    run.extend(broker_tickets_check(run.side, sasl, hosts, answer))


# ---- the judgement --------------------------------------------------------------------------------------------------
def declared_kdcs(profile: Profile, realm: str) -> list[str] | None:
    """The KDCs of ``realm`` the profile declares (None: they come from krb5.conf)."""
    declared = profile.kerberos.realms.get(realm) if profile.kerberos is not None else None
    return None if declared is None else list(declared.kdcs)


def clock_check(side: str, realm: str, kdcs: list[str] | None, answer: clock.KdcClocks | None) -> Check:
    """``kerberos.clock`` from ``probes.clock.measure_all``'s answer over the declared ``kdcs`` (None: undeclared)."""
    what, limit = "kerberos.clock", DEFAULT_MAX_SKEW_S
    if kdcs is None or answer is None:
        return check(
            side,
            what,
            SKIPPED,
            f"the KDCs of {realm} come from krb5.conf, not the profile: their clocks were not measured",
            f"declare kerberos.realms.{realm}.kdcs in the profile to have them measured",
        )
    measured, failed = answer["measured"], answer["failed"]
    details = {"allowed_skew_s": limit, "kdcs": [vars(m) for m in measured], "not_measured": failed}
    if not measured:
        return check(
            side,
            what,
            UNVERIFIED,
            f"no KDC of {realm} told its time ({'; '.join(failed)}): the clock skew is not known",
            "check the KDCs answer on TCP or UDP from this machine",
            details=details,
        )
    worst = max(measured, key=lambda m: abs(m.offset_s))
    words = (
        f"the KDC {worst.kdc} of {realm} is {abs(worst.offset_s):.1f} s "
        f"{'ahead of' if worst.offset_s > 0 else 'behind'} this machine (±{worst.uncertainty_s:.1f} s)"
    )
    if abs(worst.offset_s) - worst.uncertainty_s > limit:
        finding = f"{words}: more than the {limit:.0f} s Kerberos allows, so Kafka's logins will be refused"
        return check(side, what, FAIL, finding, CLOCK_FIX, details=details)
    if abs(worst.offset_s) + worst.uncertainty_s > limit / 2:
        return check(
            side, what, WARN, f"{words}: close to the {limit:.0f} s Kerberos allows", CLOCK_FIX, details=details
        )
    finding = (
        f"{words}, within the {limit:.0f} s Kerberos allows; {len(measured)} of {len(kdcs)} KDC(s) measured "
        "(brokers' clocks are not measured: Kafka's protocol does not show them)"
    )
    return check(side, what, PASS, finding, details=details)


def keytab_check(side: str, sasl: GssapiSasl, answer: kerberos.KeytabRead | Failed) -> Check:
    """``kerberos.keytab`` from ``probes.kerberos.keytab_entries``'s answer: the principal's keys and their types."""
    if "error" in answer:
        return check(
            side,
            "kerberos.keytab",
            FAIL,
            f"{sasl.keytab} is not a keytab ({answer['error']})",
            "export the keytab again with kadmin ktadd",
        )
    entries = [e for e in answer["entries"] if e.principal == sasl.principal]
    if not entries:
        return check(
            side,
            "kerberos.keytab",
            FAIL,
            f"{sasl.keytab} holds no key for {sasl.principal}",
            f"export the keys (kadmin: ktadd -k {sasl.keytab} {sasl.principal}) or fix {side}.sasl.principal",
        )
    kvnos = sorted({e.kvno for e in entries})
    enctypes = sorted({e.enctype for e in entries})
    details = {"kvnos": kvnos, "enctypes": enctypes}
    if set(enctypes) <= kerberos.WEAK_ENCTYPES:
        finding = f"{sasl.principal}: only weak encryption types ({', '.join(enctypes)})"
        return check(
            side, "kerberos.keytab", WARN, finding, "re-key the principal with aes256-cts-hmac-sha1-96", details=details
        )
    finding = f"{sasl.principal}: key version(s) {', '.join(map(str, kvnos))}, {', '.join(enctypes)}"
    return check(side, "kerberos.keytab", PASS, finding, details=details)


def initial_ticket_check(side: str, sasl: GssapiSasl, answer: kerberos.Login | kerberos.LoginRefused) -> Check:
    """``kerberos.initial-ticket`` from ``probes.kerberos.login``'s answer."""
    if "failure" in answer:
        failure = answer["failure"]
        details = {"kind": failure["kind"]}
        return check(side, "kerberos.initial-ticket", FAIL, failure["message"], failure["fix"], details=details)
    lifetime = answer["lifetime"]
    finding = (
        f"ticket for {sasl.principal} from the KDC of {sasl.realm}, "
        f"valid {lifetime // 3600}h{lifetime % 3600 // 60:02d}m (renewed from the keytab, not by renewal)"
    )
    return check(side, "kerberos.initial-ticket", PASS, finding, details={"lifetime_s": lifetime})


def service_ticket_check(side: str, what: str, sasl: GssapiSasl, answer: kerberos.ServiceTickets) -> Check:
    """``what`` (``kerberos.service-ticket``, ``kerberos.broker-tickets``) from ``probes.kerberos.service_tickets``."""
    if (failure := answer["failure"]) is not None:
        details = {"kind": failure["kind"], "host": failure["host"]}
        return check(side, what, FAIL, failure["message"], failure["fix"], details=details)
    spns = ", ".join(f"{sasl.service_name}/{h}" for h in answer["hosts"])
    return check(side, what, PASS, f"service tickets for {spns}")


def broker_hosts_beyond_bootstrap(cluster: Cluster, hosts: list[str]) -> list[str]:
    bootstrap = {h for h, _ in cluster.brokers}
    return [h for h in hosts if h not in bootstrap]


def broker_tickets_check(
    side: str, sasl: GssapiSasl, hosts: list[str], answer: kerberos.ServiceTickets | None
) -> Check:
    """``kerberos.broker-tickets``: the cluster's brokers (``hosts``) beyond the bootstrap servers, whose service
    tickets were asked (``answer``; None: there are none beyond them)."""
    if answer is None:
        finding = f"the cluster's brokers ({', '.join(hosts)}) are the bootstrap servers already checked"
        return check(side, "kerberos.broker-tickets", PASS, finding)
    return service_ticket_check(side, "kerberos.broker-tickets", sasl, answer)
