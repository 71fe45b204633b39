"""Pre-flight through Kafka's Java client: the client Spark's Kafka connector and MirrorMaker 2 use.

librdkafka (the other checks) and the Java client accept different settings: a key, a JAAS option or a TLS setting
one takes can stop the other at start. So, for each side librdkafka reached, the rendered ``client.properties`` is
loaded by Kafka's own ``Admin`` client in one JVM (``jvm/tools/JavaClientProbe.java``), which connects,
authenticates and asks for the cluster's authorized operations. The file is written 0600 into pre-flight's private
folder and passed by path; what the JVM answers is cleaned of the side's secret values before it is reported.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from secure_mirror import paths
from secure_mirror.preflight.model import FAIL, PASS, UNVERIFIED, Check
from secure_mirror.profile.models import Cluster, OAuthSasl, PasswordSasl, Profile
from secure_mirror.profile.secrets import withheld_from_children
from secure_mirror.render import java_properties
from secure_mirror.render.tree import OAUTH_ALLOWED_URLS

PROBE = Path(__file__).resolve().parents[2] / "jvm" / "tools" / "JavaClientProbe.java"
WHAT = "java.client"


# ---- the thin part: write the files, run the JVM, read its lines -------------------------------------------------
def probe(profile: Profile, sides: list[str], folder: Path, krb5_conf: str | None, timeout: float) -> dict[str, list]:
    """side -> ["ok", cluster id, brokers, operations] or ["error", class, message] (or ["missing", why])."""
    java = shutil.which(paths.java_executable())
    if java is None or not PROBE.exists() or not any(paths.kafka_lib_dir().glob("kafka-clients-*.jar")):
        return {side: ["missing", "Java or Kafka's jars (.deps/kafka/lib) are not installed here"] for side in sides}
    requests = "".join(f"{side}\t{_write(folder, profile, side)}{_token_request(profile, side)}\n" for side in sides)
    options = [f"-Djava.security.krb5.conf={krb5_conf}"] if krb5_conf else []
    urls = sorted({c.sasl.token_endpoint_url for c in profile.clusters().values() if isinstance(c.sasl, OAuthSasl)})
    options += [f"-D{OAUTH_ALLOWED_URLS}={','.join(urls)}"] if urls else []
    argv = [
        java,
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        *options,
        "-cp",
        paths.kafka_classpath(),
        str(PROBE),
        str(int(timeout * 1000)),
    ]
    try:
        with withheld_from_children():
            done = subprocess.run(
                argv,
                input=requests,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=60 + 4 * timeout * len(sides),
                check=False,
            )
    except subprocess.TimeoutExpired:
        return {side: ["error", "Timeout", f"no answer within {60 + 4 * timeout * len(sides):g}s"] for side in sides}
    answers = {line.split("\t")[0]: line.split("\t")[1:] for line in done.stdout.splitlines() if "\t" in line}
    return {side: answers.get(side, ["error", "NoAnswer", f"the JVM exited with {done.returncode}"]) for side in sides}


def _token_request(profile: Profile, side: str) -> str:
    """Ask the probe to create, use and expire a delegation token when the side's executors will log in with one."""
    return "\ttoken" if getattr(profile, side).uses_delegation_token else ""


def _write(folder: Path, profile: Profile, side: str) -> Path:
    cluster: Cluster = getattr(profile, side)
    text = java_properties.properties_text(java_properties.client_properties(cluster, side), [])
    path = folder / f"{side}-java-client.properties"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the side's secrets
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


# ---- what an answer means ------------------------------------------------------------------------------------------
def java_checks(profile: Profile, answers: dict[str, list], sides: tuple[str, ...] = ()) -> list[Check]:
    """The Java client's check per side it was asked about, and ``kafka.delegation_token`` for every side of
    ``sides`` whose executors log in with tokens (unverified when it could not be asked)."""
    found = [_check(profile, side, answer) for side, answer in answers.items()]
    return found + [
        token_check(profile, side, answers.get(side))
        for side in (sides or tuple(answers))
        if getattr(profile, side).uses_delegation_token
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


def token_check(profile: Profile, side: str, answer: list | None) -> Check:
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
            f"the brokers issued a delegation token to {getattr(profile, side).kafka_principal} (it lives {lifetime} s, "
            f"renewable up to {maximum} s), a client logged in with it over SCRAM-SHA-512 as the executors will, and "
            "it was expired again; Spark's driver obtains a new one when spark.security.credentials.renewalRatio (0.75 "
            "unless set) of its lifetime has passed",
        )
    step, kind, message = (fields + ["", "", ""])[:3]
    cluster: Cluster = getattr(profile, side)
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


def _check(profile: Profile, side: str, answer: list) -> Check:
    cluster: Cluster = getattr(profile, side)
    check_id = f"{side}.{WHAT}"
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
