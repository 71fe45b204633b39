"""Pre-flight through Kafka's Java client: the client Spark's Kafka connector and MirrorMaker 2 use.

librdkafka (the other checks) and the Java client accept different settings: a key, a JAAS option or a TLS setting
one takes can stop the other at start. So, for each side librdkafka reached, the rendered ``client.properties`` is
loaded by Kafka's own ``Admin`` client in one JVM (``jvm/tools/JavaClientProbe.java``), which connects,
authenticates and asks for the cluster's authorized operations. The settings, values included, go through the JVM's
stdin (Base64 on the request's line), never into a file. What the JVM answers means (cleaned of the side's secret
values) is decided in ``preflight.checks.connection``.
"""

from __future__ import annotations

import shutil
import subprocess

from secure_mirror import paths
from secure_mirror.kafka import timeouts
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile
from secure_mirror.profile.secrets import withheld_from_children
from secure_mirror.render import java_properties

MISSING = [
    "missing",
    "Java or Kafka's Java client is not on this machine (a checkout's .deps/kafka/lib; installed: the jars in "
    "mirror.spark.jars.local_dir, or in Spark's Ivy folder once a run resolved them)",
]


# The probe's answer for a side, as its JVM prints it: ["ok", cluster id, brokers, operations(, "token", ...)],
# ["error", class, message] or ["missing", why]
JavaAnswer = list[str]


def probe(profile: Profile, sides: list[Side], krb5_conf: str | None, timeout: float) -> dict[Side, JavaAnswer]:
    """side -> ["ok", cluster id, brokers, operations] or ["error", class, message] (or ["missing", why])."""
    with Started(profile, krb5_conf, timeout) as jvm:
        return jvm.answers(sides)


class Started:
    """The probe's JVM, started before it is asked: the JVM's start and the compilation of the probe's source (about
    1.5 s of CPU, at every run) overlap the other checks. It takes one request per line on stdin and answers each in
    turn: ``send`` a side as soon as librdkafka reached it, then ``answers`` collects them (the JVM ends once told
    there is nothing more); leaving the ``with`` kills a JVM still running."""

    def __init__(self, profile: Profile, krb5_conf: str | None, timeout: float):
        self.profile, self.timeout = profile, timeout
        self.sent: list[Side] = []
        self.proc: subprocess.Popen | None = None
        java = shutil.which(paths.java_executable())
        command = paths.java_probe_command(profile.mirror.spark.jars.local_dir)
        if java is None or command is None:
            return
        with withheld_from_children():
            self.proc = subprocess.Popen(
                _argv(java, command, profile, krb5_conf, timeout),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
            )

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def send(self, side: Side) -> None:
        """Ask about ``side`` now (its client settings go through the pipe)."""
        if self.proc is None or self.proc.stdin is None or side in self.sent:
            return
        self.sent.append(side)
        settings = java_properties.piped_settings(self.profile.cluster(side), side)
        try:
            self.proc.stdin.write(f"{side}\t{settings}{_token_request(self.profile, side)}\n")
            self.proc.stdin.flush()
        except OSError:  # the JVM ended: ``answers`` says how
            pass

    def answers(self, sides: list[Side]) -> dict[Side, JavaAnswer]:
        """side -> the probe's answer for each of ``sides`` (sent now if not yet); none: the JVM is stopped."""
        if not sides:
            self.close()
            return {}
        if self.proc is None:
            return {side: MISSING for side in sides}
        for side in sides:
            self.send(side)
        limit = 60 + 4 * self.timeout * len(sides)
        try:
            out, _ = self.proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            self.close()
            return {side: ["error", "Timeout", f"no answer within {limit:g}s"] for side in sides}
        answers = {line.split("\t")[0]: line.split("\t")[1:] for line in out.splitlines() if "\t" in line}
        code = self.proc.returncode
        return {side: answers.get(side, ["error", "NoAnswer", f"the JVM exited with {code}"]) for side in sides}

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def _argv(java: str, command: list[str], profile: Profile, krb5_conf: str | None, timeout: float) -> list[str]:
    options = java_properties.jvm_options(profile, krb5_conf)
    return [
        java,
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        *options,
        *command,
        str(timeouts.java_ms(timeout)),
    ]


def _token_request(profile: Profile, side: Side) -> str:
    """Ask the probe to create, use and expire a delegation token when the side's executors will log in with one."""
    return "\ttoken" if profile.cluster(side).uses_delegation_token else ""
