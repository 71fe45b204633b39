"""MirrorMaker 2's checkpoint records (secure_mirror/run/groups/checkpoints.py) against Kafka's own
``org.apache.kafka.connect.mirror.Checkpoint`` and ``CheckpointFormatter`` from the Kafka jars in .deps
(tests/support/CheckpointBytes.java): the same bytes for generated checkpoints (seeded), and each side reads the
other's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.run.groups.checkpoints import Checkpoint, CheckpointFormatError, decode, encode
from secure_mirror.sandbox.sink_jar import JAVAC_LINT
from tests.support.seeds import seeded

PROGRAM = paths.REPO_ROOT / "tests" / "support" / "CheckpointBytes.java"
ALPHABET = "abcXYZ019._-é漢🙂 "


def test_the_bytes_of_one_checkpoint():
    key, value = encode(Checkpoint("g1", "src.t", 3, 10, 20))
    assert key == b"\x00\x02g1\x00\x05src.t\x00\x00\x00\x03"
    assert value == b"\x00\x00" + (10).to_bytes(8, "big") + (20).to_bytes(8, "big") + b"\x00\x00"
    assert decode(key, value) == Checkpoint("g1", "src.t", 3, 10, 20)


def test_what_is_not_a_checkpoint_is_refused_with_a_sentence():
    key, value = encode(Checkpoint("g", "t", 0, 1, 2))
    with pytest.raises(CheckpointFormatError, match="only version 0 exists"):
        decode(key, b"\x00\x01" + value[2:])
    with pytest.raises(CheckpointFormatError, match="end inside a field"):
        decode(key[:-1], value)
    with pytest.raises(CheckpointFormatError, match="does not fit Kafka's STRING"):
        encode(Checkpoint("g" * 40000, "t", 0, 1, 2))


@pytest.fixture(scope="module")
def kafka_checkpoint(tmp_path_factory):
    """A function sending lines to CheckpointBytes (compiled without a lint warning) and returning its answers."""
    out = tmp_path_factory.mktemp("checkpoint-bytes")
    javac = str(Path(paths.java_executable()).with_name("javac"))
    compiled = subprocess.run(
        [javac, *JAVAC_LINT, "--release", "17", "-d", str(out), "-cp", paths.kafka_classpath(), str(PROGRAM)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stderr[-4000:]

    def ask(lines: list[str]) -> list[str]:
        res = subprocess.run(
            [paths.java_executable(), "-cp", f"{out}:{paths.kafka_classpath()}", "CheckpointBytes"],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr[-4000:]
        return res.stdout.splitlines()

    return ask


def _text(rng, longest: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest)))


def _generated(rng) -> Checkpoint:
    big = 2**63 - 1
    return Checkpoint(
        _text(rng, 30) or "g",
        _text(rng, 40) or "t",
        rng.choice([0, 1, rng.randint(0, 2**31 - 1)]),
        rng.choice([0, rng.randint(0, 10**6), big]),
        rng.choice([0, rng.randint(0, 10**12), big]),
        rng.choice(["", _text(rng, 20)]),
    )


@pytest.mark.jvm
def test_the_same_bytes_as_kafkas_checkpoint_and_each_reads_the_other(kafka_checkpoint):
    rng = seeded("checkpoint records")
    cases = [_generated(rng) for _ in range(300)]
    requests = [
        "\t".join(
            [
                "encode",
                c.group.encode().hex(),
                c.topic.encode().hex(),
                str(c.partition),
                str(c.upstream_offset),
                str(c.downstream_offset),
                c.metadata.encode().hex(),
            ]
        )
        for c in cases
    ]
    requests += ["\t".join(["decode", *(part.hex() for part in encode(c))]) for c in cases]
    answers = kafka_checkpoint(requests)
    assert len(answers) == 2 * len(cases)
    for checkpoint, answer in zip(cases, answers[: len(cases)]):
        key, value = (bytes.fromhex(part) for part in answer.split("\t"))
        assert (key, value) == encode(checkpoint), checkpoint
        assert decode(key, value) == checkpoint
    for checkpoint, answer in zip(cases, answers[len(cases) :]):
        group, topic, partition, upstream, downstream, metadata, printed = answer.split("\t")
        read = Checkpoint(
            bytes.fromhex(group).decode(),
            bytes.fromhex(topic).decode(),
            int(partition),
            int(upstream),
            int(downstream),
            bytes.fromhex(metadata).decode(),
        )
        assert read == checkpoint
        assert bytes.fromhex(printed).decode() == (  # what MirrorMaker 2's CheckpointFormatter prints
            f"Checkpoint{{consumerGroupId={checkpoint.group}, topicPartition={checkpoint.topic}-"
            f"{checkpoint.partition}, upstreamOffset={checkpoint.upstream_offset}, downstreamOffset="
            f"{checkpoint.downstream_offset}, metadata={checkpoint.metadata}}}\n"
        )
