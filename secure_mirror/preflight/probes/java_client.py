"""Pre-flight through Kafka's Java client: the client Spark's Kafka connector and MirrorMaker 2 use.

librdkafka (the other checks) and the Java client accept different settings: a key, a JAAS option or a TLS setting
one takes can stop the other at start. So, for each side librdkafka reached, the rendered ``client.properties`` is
loaded by Kafka's own ``Admin`` client in one JVM (``jvm/tools/JavaClientProbe.java``), which connects,
authenticates and asks for the cluster's authorized operations. The file is written 0600 into pre-flight's private
folder and passed by path. What the JVM answers means (cleaned of the side's secret values) is decided in
``preflight.checks.connection``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from secure_mirror import paths
from secure_mirror.profile.models import OAuthSasl, Profile, Side
from secure_mirror.profile.secrets import withheld_from_children
from secure_mirror.render import java_properties
from secure_mirror.render.tree import OAUTH_ALLOWED_URLS

PROBE = paths.REPO_ROOT / "jvm" / "tools" / "JavaClientProbe.java"


def probe(profile: Profile, sides: list[Side], folder: Path, krb5_conf: str | None, timeout: float) -> dict[Side, list]:
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


def _token_request(profile: Profile, side: Side) -> str:
    """Ask the probe to create, use and expire a delegation token when the side's executors will log in with one."""
    return "\ttoken" if profile.cluster(side).uses_delegation_token else ""


def _write(folder: Path, profile: Profile, side: Side) -> Path:
    text = java_properties.properties_text(java_properties.client_properties(profile.cluster(side), side), [])
    path = folder / f"{side}-java-client.properties"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the side's secrets
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
