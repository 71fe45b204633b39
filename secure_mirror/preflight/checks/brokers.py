"""Every broker the cluster's metadata names, not only the bootstrap servers (``kafka.brokers``): each must complete
TLS with a certificate naming its own host, and accept the identity's login on its own. A leader, a group coordinator
or a transaction coordinator can move to any of them; a broker with a wrong service principal, keytab or certificate
passes every other check and stops the job the day one moves there.

Asked through ``probes.tls.handshakes`` (each advertised listener) and ``probes.kafka_admin.cluster.each_broker``
(a client bootstrapped to that broker alone); judged by the pure ``brokers_check``. A broker that could not be reached
only warns, naming it: the metadata may still name a broker that just stopped."""

from __future__ import annotations

from dataclasses import dataclass

from secure_mirror.preflight.checks.base import SideChecks, check, client_conf, listed
from secure_mirror.preflight.model import FAIL, PASS, WARN, Check
from secure_mirror.preflight.probes import tls
from secure_mirror.preflight.probes.kafka_admin import cluster as cluster_probes
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.security import GssapiSasl

WHAT = "kafka.brokers"
Node = tuple[int, str, int]  # (node id, host, port), as the metadata names a broker


# ---- the step: ask, then judge ------------------------------------------------------------------------------------
def every_broker(run: SideChecks, cluster: Cluster, nodes: list[Node], timeout: float) -> None:
    """``kafka.brokers`` for the brokers ``nodes`` (the metadata's, once ``kafka.connect`` passed)."""
    if run.blocked(WHAT, "kerberos.broker-tickets"):
        return
    servers = [(host, port) for _, host, port in nodes]
    handshakes = tls.handshakes(servers, tls.context_for(cluster.tls_settings), timeout) if cluster.uses_tls else None
    logins = cluster_probes.each_broker(client_conf(cluster, run.side), nodes, timeout)
    run.extend(brokers_check(run.side, cluster, nodes, handshakes, logins))


# ---- the judgement --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Problem:
    node: int
    server: str
    kind: str  # certificate, login, unreached
    message: str
    fix: str

    @property
    def sentence(self) -> str:
        return f"broker {self.node} ({self.server}): {self.message}"


def brokers_check(
    side: str,
    cluster: Cluster,
    nodes: list[Node],
    handshakes: tls.Handshakes | None,
    logins: list[cluster_probes.BrokerLogin],
) -> Check:
    """``kafka.brokers`` from the handshakes with each broker's advertised listener (None: the side uses no TLS) and
    each broker's own answer. A certificate or a login refused fails, naming every such broker and the first one's
    fix; brokers that could not be reached warn."""
    ids = {f"{host}:{port}": node for node, host, port in nodes}
    problems = [
        Problem(
            ids.get(r["server"], -1),
            r["server"],
            "unreached" if r["kind"] in tls.UNREACHED else "certificate",
            r["message"],
            r["fix"],
        )
        for r in (handshakes or {"refused": []})["refused"]
    ]
    told = {p.server for p in problems}
    problems += [
        _login_problem(cluster, login, _host(login["server"]))
        for login in logins
        if login["error"] is not None and login["server"] not in told
    ]
    details = {
        "brokers": [{"node": n, "server": f"{h}:{p}"} for n, h, p in nodes],
        "problems": [{"node": p.node, "server": p.server, "kind": p.kind} for p in problems],
    }
    failed = [p for p in problems if p.kind != "unreached"]
    if failed:
        finding = f"{len(failed)} of the {len(nodes)} brokers the metadata names would stop the job when a leader or "
        finding += f"coordinator moves there: {'; '.join(p.sentence for p in failed)}"
        return check(side, WHAT, FAIL, finding, failed[0].fix, details=details)
    if problems:
        finding = f"{'; '.join(p.sentence for p in problems)}; the other brokers of the {len(nodes)} answered"
        fix = (
            "start the broker(s) named and run pre-flight again; partitions they lead cannot be mirrored meanwhile, "
            "and their certificate and login are unproven"
        )
        return check(side, WHAT, WARN, finding, fix, details=details)
    names = listed([f"{n} {h}:{p}" for n, h, p in nodes])
    proven = "completed TLS with a certificate naming its host and " if handshakes is not None else ""
    finding = f"each of the {len(nodes)} broker(s) the metadata names ({names}) {proven}accepted this identity's login"
    return check(side, WHAT, PASS, finding, details=details)


def _host(server: str) -> str:
    return server.rsplit(":", 1)[0]


def _login_problem(cluster: Cluster, login: cluster_probes.BrokerLogin, host: str) -> Problem:
    reason = login["error"] or ""
    text = reason.lower()
    if "authentication" in text or "sasl" in text:
        return Problem(
            login["node"], login["server"], "login", f"refused the login: {reason}", _login_fix(cluster, host)
        )
    if "ssl" in text or "certificate" in text or "handshake" in text:
        fix = f"re-issue that broker's certificate for {host} (subjectAltName DNS:{host}), signed by the CA in tls.ca"
        return Problem(login["node"], login["server"], "certificate", f"TLS failed: {reason}", fix)
    return Problem(login["node"], login["server"], "unreached", f"did not answer: {reason}", "")


def _login_fix(cluster: Cluster, host: str) -> str:
    sasl = cluster.sasl
    if isinstance(sasl, GssapiSasl):
        spn = f"{sasl.service_name}/{host}"
        return (
            f"the KDC issued a ticket for {spn}, which that broker could not accept: its listener must log in as {spn} "
            f"with that principal's current key in its keytab (compare klist -kt on the broker with kadmin getprinc "
            f"{spn}); export the key again (kadmin ktadd) into that broker's keytab and restart it"
        )
    mechanism = sasl.mechanism if sasl is not None else "TLS client certificates"
    return (
        f"that broker's listener must accept {mechanism} as the others do (its sasl.enabled.mechanisms and the "
        "listener's JAAS or callback settings); restart it once fixed"
    )
