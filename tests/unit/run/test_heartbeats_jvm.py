"""Our heartbeat encoder and decoder (secure_mirror/run/heartbeats.py) against MirrorMaker 2's own Heartbeat class
(Kafka 4.2's connect-mirror-client in .deps), run by tests/support/HeartbeatBytes.java: the same bytes for the same
heartbeat, each side decodes the other's, and neither accepts a truncated record."""

from __future__ import annotations

import random
import subprocess

import pytest

from secure_mirror import paths
from secure_mirror.run import heartbeats
from secure_mirror.run.heartbeats import Heartbeat, HeartbeatFormatError

pytestmark = pytest.mark.jvm
PROGRAM = paths.REPO_ROOT / "tests" / "support" / "HeartbeatBytes.java"
SEED = 20261201


def _kafka(lines: list[str]) -> list[str]:
    res = subprocess.run(
        [paths.java_executable(), "-cp", paths.kafka_classpath(), str(PROGRAM)],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    return res.stdout.splitlines()


def _cases() -> list[Heartbeat]:
    rng = random.Random(SEED)
    print(f"seed {SEED}")
    alphabet = "abcXYZ019_-.é漢"
    cases = [Heartbeat("src", "tgt", 1_764_000_000_000), Heartbeat("", "", 0), Heartbeat("a", "b", -1)]
    for _ in range(40):
        cases.append(
            Heartbeat(
                "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))),
                "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))),
                rng.randint(-(2**63), 2**63 - 1),
            )
        )
    return cases


def test_our_bytes_are_kafkas_and_each_decodes_the_other():
    cases = _cases()
    hexed = [
        f"encode\t{c.source_alias.encode().hex()}\t{c.target_alias.encode().hex()}\t{c.timestamp_ms}" for c in cases
    ]
    theirs = _kafka(hexed)
    ours = [heartbeats.encode(c) for c in cases]
    assert theirs == [f"{key.hex()}\t{value.hex()}" for key, value in ours]
    decoded = _kafka([f"decode\t{key.hex()}\t{value.hex()}" for key, value in ours])
    assert decoded == [
        f"{c.source_alias.encode().hex()}\t{c.target_alias.encode().hex()}\t{c.timestamp_ms}" for c in cases
    ]
    for line, case in zip(theirs, cases):
        key, value = (bytes.fromhex(part) for part in line.split("\t"))
        assert heartbeats.decode(key, value) == case


def test_a_truncated_heartbeat_is_refused_by_both():
    key, value = heartbeats.encode(Heartbeat("src", "tgt", 5))
    answers = _kafka([f"decode\t{key[:-1].hex()}\t{value.hex()}", f"decode\t{key.hex()}\t{value[:-1].hex()}"])
    assert all(answer.startswith("error ") for answer in answers), answers
    for bad_key, bad_value in ((key[:-1], value), (key, value[:-1])):
        with pytest.raises(HeartbeatFormatError):
            heartbeats.decode(bad_key, bad_value)
