"""Many groups' committed offsets in few requests: Kafka's Java Admin in a JVM kept for the sync's session
(``jvm/tools/GroupOffsets.java``).

librdkafka (``reading.committed``) sends one FindCoordinator and one OffsetFetch per group: over 10,000 mostly idle
groups that was 20,000 requests every pass, what was left of a pass's cost on the brokers (benchmarks/NOTES.md
section 25). The Java Admin finds every coordinator in one request (KIP-699) and asks each coordinator for 500 of
its groups a request (OffsetFetch v8, KIP-709; GroupOffsets.java says why not all at once). A JVM costs about 1.5 s
of CPU to start and 100 MB, more than a few groups' requests: a sync pass asks it from :data:`FROM_GROUPS` groups
on, a command's one look (failover, groups, cut-over) from :data:`ONCE_FROM`, and librdkafka below that, or
whenever the JVM could not start or answer (``None``: the caller asks librdkafka instead).

The client settings, secret values included, reach the JVM through its stdin, never a file or its arguments (as
pre-flight's Java probe). Group ids, topics and metadata travel in Base64: any character a Kafka name may hold.
"""

from __future__ import annotations

import base64
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from secure_mirror import java_tools, paths
from secure_mirror.errors import EnvironmentNotReady
from secure_mirror.kafka import timeouts
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile
from secure_mirror.profile.secrets import withheld_from_children
from secure_mirror.render import java_properties

FROM_GROUPS = 200  # a sync pass over this many groups or more asks the Java Admin (its JVM kept for the run)
# A command's one look (failover, groups, cut-over) from this many: its JVM's start (about 2 s) is paid for one answer,
# and librdkafka asked 300 groups in 1.0 s on this machine loaded, the JVM its first answer in 2.1 s and the next 0.08 s
ONCE_FROM = 1000
TIMEOUT = 30.0  # seconds for the Admin's requests (as reading.TIMEOUT)
START_TIMEOUT = 120.0  # seconds for the JVM's first answer (its start and its login included)
ASK_TIMEOUT = 2 * TIMEOUT + 30  # seconds for a later one (its coordinators found again, then asked)
TOOL = "GroupOffsets"
JAVA_ADMIN, LIBRDKAFKA = "java_admin", "librdkafka"  # who read a pass's source offsets (its metrics line says)
Offsets = dict[tuple[str, int], tuple[int, str]]  # (topic, partition) -> (offset, metadata)


def answers(
    lines: Iterable[str],
    groups: Sequence[str],
    partitions: dict[str, int],
    said: dict[str, Offsets] | None = None,
) -> dict[str, dict] | None:
    """The tool's answer to one request as ``reading.committed`` gives it: group -> {offsets: {(topic, partition):
    (offset, metadata)}, error}, on the partitions of ``partitions`` (topic -> count); None when the request as a
    whole failed (an ``f`` line: the caller asks librdkafka).

    The tool names only the groups whose offsets changed since it last said them (``o`` lines, or ``c`` for none
    now): ``said`` holds each group's offsets as it last said them (every topic and partition), kept by the caller
    between answers and updated here. A group asked, not named and never said is a disagreement between the tool and
    its reader: None, as a failed request. A group's lines repeat its id, topic and metadata: each field is decoded
    once per answer."""
    said = {} if said is None else said
    out: dict[str, dict[str, Any]] = {g: {"offsets": {}, "error": None} for g in groups}
    changed: dict[str, Offsets] = {}
    decoded: dict[str, str] = {}

    def text(field: str) -> str:
        if (value := decoded.get(field)) is None:
            value = decoded[field] = _text(field)
        return value

    for line in lines:
        fields = line.split("\t")
        if fields[0] == "f":
            return None
        if fields[0] == "o" and len(fields) == 6:
            offsets = changed.setdefault(text(fields[1]), {})
            offsets[(text(fields[2]), int(fields[3]))] = (int(fields[4]), text(fields[5]))
        elif fields[0] == "c" and len(fields) == 2:
            changed[text(fields[1])] = {}
        elif fields[0] == "e" and len(fields) >= 3:
            group = text(fields[1])
            said.pop(group, None)
            if group in out:
                out[group]["error"] = f"{fields[2]}: {fields[3]}" if len(fields) > 3 else fields[2]
    said.update(changed)
    for group, entry in out.items():
        if entry["error"] is None:
            if group not in said:
                return None
            entry["offsets"] = {
                (topic, partition): value
                for (topic, partition), value in said[group].items()
                if value[0] >= 0 and partition < partitions.get(topic, 0)
            }
    return out


def request_line(groups: Sequence[str]) -> str:
    return "\t".join(base64.b64encode(g.encode("utf-8")).decode("ascii") for g in groups)


def _text(field: str) -> str:
    return base64.b64decode(field).decode("utf-8")


class NotYet(EnvironmentNotReady):
    """Java or a kafka-clients jar is not on this machine (yet): asked again at the next call."""


class JavaOffsets:
    """``committed(groups, partitions)`` through one JVM, started at the first call and kept until :meth:`close`.
    Once the JVM failed (its tool did not compile, it ended, no answer in time) it is not started again in this
    session: every call answers None. Without Java or a kafka-clients jar (an installed package finds one in Spark's Ivy
    folder once the job resolved it) a call answers None and the next tries again."""

    def __init__(self, profile: Profile, side: Side, krb5_config: str | None, env: dict[str, str]):
        self.profile, self.side, self.krb5_config, self.env = profile, side, krb5_config, env
        self.proc: subprocess.Popen | None = None
        # each answer whole (its lines up to "end"), None once the JVM ended: a line at a time through the queue
        # cost about 1 s of a pass's CPU at 100,000 lines, more than reading and parsing them
        self.answers: queue.Queue[list[str] | None] = queue.Queue()
        self.failed: str | None = None  # why the JVM did not answer the last call (said by the caller once)
        self.given_up = False  # it failed so that it is not asked again in this session
        self.said: dict[str, Offsets] = {}  # each group as this JVM last said it

    def committed(self, groups: Sequence[str], partitions: dict[str, int]) -> dict[str, dict] | None:
        if self.given_up:
            return None
        try:
            first = self.proc is None
            proc = self.proc or self._start()
            assert proc.stdin is not None
            proc.stdin.write(request_line(groups) + "\n")
            proc.stdin.flush()
            got = self._answer(START_TIMEOUT if first else ASK_TIMEOUT)
        except NotYet as exc:  # no Java or kafka-clients jar yet (an install's first run resolves the jar)
            self.failed = str(exc)
            return None
        except (OSError, TimeoutError, EnvironmentNotReady) as exc:  # EnvironmentNotReady: the tool did not compile
            self._give_up(str(exc) or type(exc).__name__)
            return None
        self.failed = None
        answer = answers(got, groups, partitions, self.said)
        if answer is None:
            said = "; ".join(line.split("\t", 1)[1] for line in got if line.startswith("f\t"))
            self._give_up(
                said or "its answer left out a group it had not said before (the tool and its reader disagree)"
            )
        return answer

    def _start(self) -> subprocess.Popen:
        java = shutil.which(paths.java_executable())
        class_path = java_tools.kafka_class_path(TOOL, self.profile.mirror.spark.jars.local_dir)
        if java is None or class_path is None:
            raise NotYet("Java or Kafka's Java client is not on this machine")
        self.said = {}  # a new JVM has said nothing yet
        argv = [
            java,
            "-Xmx256m",  # kept for the run: the full JIT (no TieredStopAtLevel=1, which suits one-shot JVMs)
            *java_properties.jvm_options(self.profile, self.krb5_config),
            "-cp",
            class_path,
            TOOL,
            str(timeouts.java_ms(TIMEOUT)),
        ]
        with withheld_from_children():
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                errors="replace",
                env={**os.environ, **self.env},
            )
        threading.Thread(target=self._read, args=(self.proc,), name="group-offsets-jvm", daemon=True).start()
        assert self.proc.stdin is not None
        self.proc.stdin.write(java_properties.piped_settings(self.profile.cluster(self.side), self.side) + "\n")
        return self.proc

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        answer: list[str] = []
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line == "end":
                self.answers.put(answer)
                answer = []
            else:
                answer.append(line)
        self.answers.put(None)

    def _answer(self, timeout: float) -> list[str]:
        try:
            answer = self.answers.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer within {timeout:g} s") from None
        if answer is None:
            raise OSError("the JVM ended")
        return answer

    def _give_up(self, why: str) -> None:
        self.failed, self.given_up = why, True
        self.close()

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
