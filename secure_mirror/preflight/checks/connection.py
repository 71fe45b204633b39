"""The connection: TLS trust of the brokers' certificates, librdkafka's connection and authentication
(``kafka.connect``), and the same through Kafka's Java client, which the Spark job and MirrorMaker 2 use
(``java.client``; ``kafka.delegation_token`` where the executors log in with one). Asked through ``probes.tls``,
``probes.kafka_admin`` and ``probes.java_client``; judged by the pure ``*_check`` functions."""

from __future__ import annotations

from dataclasses import dataclass

from secure_mirror.preflight.checks.base import SideChecks, check, client_conf
from secure_mirror.preflight.model import FAIL, PASS, UNVERIFIED, WARN, Check
from secure_mirror.preflight.probes import java_client, kafka_admin, tls
from secure_mirror.preflight.probes.kafka_admin import cluster as cluster_probes
from secure_mirror.profile.cluster import Cluster, Side
from secure_mirror.profile.models import Profile
from secure_mirror.profile.security import OAuthSasl, PasswordSasl


# ---- the steps: ask, then judge -----------------------------------------------------------------------------------
def tls_certificates(run: SideChecks, cluster: Cluster, timeout: float) -> None:
    if run.blocked("tls.certificate", "files.ca", "files.client-certificate"):
        return
    answer = tls.handshakes(cluster.brokers, tls.context_for(cluster.tls_settings), timeout)
    run.extend(tls_check(run.side, answer))


@dataclass
class Connected:
    admin: kafka_admin.Admin
    hosts: list[str]  # the cluster's brokers' host names, as it names them
    nodes: list[tuple[int, str, int]]  # (node id, host, port) of each broker, as its metadata names it


def connect(run: SideChecks, cluster: Cluster, timeout: float) -> Connected | None:
    """The side's admin client and brokers once ``kafka.connect`` passed, else None."""
    if run.blocked("kafka.connect", "kerberos.service-ticket", "tls.certificate", "kerberos.initial-ticket"):
        return None
    admin = kafka_admin.Admin(client_conf(cluster, run.side), timeout)
    answer = cluster_probes.connect(admin)
    if run.extend(connect_check(run.side, cluster, timeout, answer)).status != PASS or "error" in answer:
        return None
    nodes = answer["cluster"]["nodes"]
    return Connected(admin, sorted({host for _, host, _ in nodes}), nodes)


def java_client_checks(
    profile: Profile,
    reached: list[Side],
    krb5_conf: str | None,
    timeout: float,
    sides: tuple[Side, ...],
    jvm: java_client.Started | None = None,
) -> list[Check]:
    """The Java client on the sides librdkafka reached (one cause, one failure), and the delegation tokens; asked of
    ``jvm`` when the runner started it ahead (and sent it each side as librdkafka reached it), else of a JVM started
    now."""
    if jvm is not None:
        answers = jvm.answers(reached)
    else:
        answers = java_client.probe(profile, reached, krb5_conf, timeout) if reached else {}
    return java_checks(profile, answers, sides)


# ---- the judgement --------------------------------------------------------------------------------------------------
def tls_check(side: str, answer: tls.Handshakes) -> Check:
    """``tls.certificate`` from ``probes.tls.handshakes``'s answer over the bootstrap servers: a certificate refused
    fails; a server that cannot be reached only warns, naming it, while another completed a handshake (pre-flight
    goes on through the others, as the clients do); none reached fails."""
    refused = [r for r in answer["refused"] if r["kind"] not in tls.UNREACHED]
    unreached = [r for r in answer["refused"] if r["kind"] in tls.UNREACHED]
    if failure := (refused or ([] if answer["seen"] else unreached))[:1]:
        details = {"kind": failure[0]["kind"], "server": failure[0]["server"]}
        return check(side, "tls.certificate", FAIL, failure[0]["message"], failure[0]["fix"], details=details)
    finding = f"{', '.join(answer['seen'])}: certificate chains to the configured CA and names the host"
    if unreached:
        servers = [r["server"] for r in unreached]
        return check(
            side,
            "tls.certificate",
            WARN,
            f"{finding}; the bootstrap server(s) {', '.join(servers)} could not be reached "
            f"({'; '.join(r['message'] for r in unreached)}), and pre-flight went on through the others",
            f"start {'them' if len(servers) > 1 else 'it'} again, or take {'them' if len(servers) > 1 else 'it'} out "
            "of bootstrap_servers; clients start through the other bootstrap servers meanwhile",
            details={"unreached": servers},
        )
    return check(side, "tls.certificate", PASS, finding)


def connect_check(
    side: str, cluster: Cluster, timeout: float, answer: cluster_probes.Reached | cluster_probes.Unreached
) -> Check:
    """``kafka.connect`` from ``probes.kafka_admin.cluster.connect``'s answer."""
    if "error" in answer:
        finding, fix = _connect_failure(answer["error"], cluster, timeout)
        return check(side, "kafka.connect", FAIL, finding, fix, details={"librdkafka": answer["librdkafka"]})
    info = answer["cluster"]
    finding = (
        f"authenticated as {cluster.kafka_principal} to cluster {info['cluster_id']} ({len(info['nodes'])} broker(s))"
    )
    return check(side, "kafka.connect", PASS, finding, details=info)


def _connect_failure(reason: str, cluster: Cluster, timeout: float) -> tuple[str, str]:
    text = reason.lower()
    servers = ",".join(cluster.bootstrap_servers)
    if "authentication" in text or "sasl" in text:
        return (f"authentication failed: {reason}", "check the mechanism and credentials in the profile's sasl section")
    if "ssl" in text or "certificate" in text:
        return (f"TLS failed: {reason}", "check tls.ca and security_protocol against the broker's listener")
    return (
        f"no answer from {servers} within {timeout:g}s: {reason}",
        "check bootstrap_servers (host and port of the listener) and the firewall",
    )


def java_checks(
    profile: Profile, answers: dict[Side, java_client.JavaAnswer], sides: tuple[Side, ...] = ()
) -> list[Check]:
    """The Java client's check per side it was asked about, and ``kafka.delegation_token`` for every side of
    ``sides`` whose executors log in with tokens (unverified when it could not be asked)."""
    found = [java_client_check(profile, side, answer) for side, answer in answers.items()]
    return found + [
        token_check(profile, side, answers.get(side))
        for side in (sides or tuple(answers))
        if profile.cluster(side).uses_delegation_token
    ]


TOKEN_WHAT = "kafka.delegation_token"
TOKEN_GRANT = (
    "no ACL is needed for a principal to create, renew, describe and expire its own tokens (Kafka's CreateTokens "
    "and DescribeTokens on a User resource concern other users' tokens); the brokers need delegation.token.secret.key "
    "(the same on every broker and controller) and SCRAM-SHA-512 among sasl.enabled.mechanisms of the listener"
)
_TOKEN_FIX = {
    "DelegationTokenDisabledException": "the brokers do not issue delegation tokens: set delegation.token.secret.key "
    "on every broker and controller (KRaft also needs SCRAM enabled on a listener), or use executor_auth: keytab",
    "UnsupportedByAuthenticationException": "tokens are only issued over an authenticated SASL or mutual-TLS "
    "connection; use the side's SASL_SSL listener",
    "DelegationTokenAuthorizationException": TOKEN_GRANT,
}


def token_check(profile: Profile, side: Side, answer: java_client.JavaAnswer | None) -> Check:
    """Whether the brokers issue this identity a delegation token that logs in (created, used, expired again)."""
    check_id = f"{side}.{TOKEN_WHAT}"
    fields = answer[answer.index("token") + 1 :] if answer and answer[0] == "ok" and "token" in answer else None
    if fields is None:
        why = "the Java client could not reach the cluster" if answer else "the cluster could not be reached"
        return Check(
            check_id,
            UNVERIFIED,
            f"whether the brokers issue delegation tokens to this identity was not asked: {why}",
            "fix the connection checks above; executor_auth: delegation_token needs this to pass",
        )
    if fields[0] == "ok":
        lifetime, maximum = (int(v) // 1000 for v in (fields + ["0", "0"])[1:3])
        return Check(
            check_id,
            PASS,
            f"the brokers issued a delegation token to {profile.cluster(side).kafka_principal} (it lives {lifetime} s, "
            f"renewable up to {maximum} s), a client logged in with it over SCRAM-SHA-512 as the executors will, and "
            "it was expired again; Spark's driver obtains a new one when spark.security.credentials.renewalRatio (0.75 "
            "unless set) of its lifetime has passed",
        )
    step, kind, message = (fields + ["", "", ""])[:3]
    cluster: Cluster = profile.cluster(side)
    fix = _TOKEN_FIX.get(kind, TOKEN_GRANT)
    if step == "login":
        fix = "the brokers issued a token but refused a login with it: enable SCRAM-SHA-512 on the listener"
    return Check(
        check_id,
        FAIL,
        f"delegation token, step {step}: {kind}: {_clean(message, cluster)}",
        fix,
        details={"exception": kind, "step": step},
    )


# Kafka's org.apache.kafka.common.errors.TimeoutException, and the probe's own limit (probes/java_client.py)
TIMED_OUT = ("TimeoutException", "Timeout")


def java_client_check(profile: Profile, side: Side, answer: java_client.JavaAnswer) -> Check:
    cluster: Cluster = profile.cluster(side)
    check_id = f"{side}.java.client"
    if answer[0] == "ok":
        cluster_id, brokers, operations = (answer + ["", "", "-"])[1:4]
        ops = {"-": "none", "?": "not reported (a broker older than Kafka 2.3)"}.get(
            operations, operations.replace(",", ", ")
        )
        return Check(
            check_id,
            PASS,
            f"Kafka's Java client (as Spark and MirrorMaker 2 run it) loaded the rendered "
            f"client.properties, authenticated and reached cluster {cluster_id} ({brokers} broker(s)); "
            f"cluster operations allowed: {ops}",
        )
    if answer[0] == "missing":
        return Check(
            check_id,
            UNVERIFIED,
            f"the Java client could not be tried: {answer[1]}",
            "run scripts/setup (Java 17 and Kafka's jars); the Spark job needs them too",
        )
    kind, message = (answer + ["", ""])[1:3]
    if kind in TIMED_OUT:  # a timeout is not a refusal: the client was not answered in time, nothing was refused
        return Check(
            check_id,
            UNVERIFIED,
            f"Kafka's Java client got no answer in time ({kind}: {_clean(message, cluster)}), so whether it accepts "
            "the rendered client.properties was not shown",
            "run pre-flight again, with a longer --timeout if the brokers or this machine are busy",
            details={"exception": kind},
        )
    return Check(
        check_id,
        FAIL,
        f"Kafka's Java client failed where librdkafka succeeded: {kind}: {_clean(message, cluster)}",
        f"Spark's job and MirrorMaker 2 would fail the same way at start; fix "
        f"the {side} setting the message names (the file is {side}/client.properties of secure-mirror render)",
        details={"exception": kind},
    )


def _clean(message: str, cluster: Cluster) -> str:
    """The JVM's message without the side's secret values (a parser may quote what it could not read)."""
    for secret in _secrets(cluster):
        if secret:
            message = message.replace(secret, "[secret]")
    return message[:500]


def _secrets(cluster: Cluster) -> list[str]:
    refs = []
    if isinstance(cluster.sasl, PasswordSasl):
        refs.append(cluster.sasl.password)
    if isinstance(cluster.sasl, OAuthSasl):
        refs.append(cluster.sasl.client_secret)
    if cluster.tls is not None:
        refs += [ref for ref in (cluster.tls.key_password, cluster.tls.truststore_password) if ref is not None]
    return [ref.resolve() for ref in refs]
