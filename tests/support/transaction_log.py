"""The transaction coordinator's own record of the transactions a broker ran, read with Kafka's tool.

For each state change of a transactional id the coordinator appends a record to the internal topic
``__transaction_state``: the producer id and epoch, the state, and the partitions in the transaction so far. Each
AddPartitionsToTxn that adds partitions appends one in state Ongoing with the whole set. :func:`dump` reads a broker's
segments of that topic with ``kafka.tools.DumpLogSegments --transaction-log-decoder`` (what Kafka's
``bin/kafka-dump-log.sh`` runs), from the files in the broker's data folder; it reads the active segment as it is.
:func:`parse` and :func:`transactions` are pure functions of its output (tests/unit/test_transaction_log.py feeds
them captured output).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from secure_mirror import paths

DUMP_LOG_SEGMENTS = "kafka.tools.DumpLogSegments"  # bin/kafka-dump-log.sh: exec kafka-run-class.sh <this> "$@"
# Kafka's TransactionState ids (org.apache.kafka.coordinator.transaction.TransactionState), as the decoder prints them
STATES = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}
RECORD = "| offset: "  # the decoder's line of one record (its batch's line comes before it)


@dataclass(frozen=True)
class StateRecord:
    """One record of ``__transaction_state``: a transactional id's state and its partitions (topic, partition)."""

    transactional_id: str
    producer_id: int
    epoch: int
    state: str
    partitions: frozenset[tuple[str, int]]


@dataclass(frozen=True)
class Transaction:
    """One transaction of an id: the partition sets of its Ongoing records, in the order the coordinator wrote them."""

    transactional_id: str
    steps: tuple[frozenset[tuple[str, int]], ...]

    def of(self, topic: str) -> list[frozenset[int]]:
        """The partitions of ``topic`` at each step."""
        return [frozenset(p for t, p in step if t == topic) for step in self.steps]


def segments(data_dir: Path) -> list[Path]:
    """A broker's segment files of ``__transaction_state``, each partition's in offset order."""
    return sorted(data_dir.glob("__transaction_state-*/*.log"), key=lambda f: (f.parent.name, f.name))


def dump(files: list[Path], timeout: float = 120.0) -> str:
    """The decoder's output over ``files`` (Kafka's tool, from .deps/kafka/lib)."""
    return dump_segments(files, "--transaction-log-decoder", timeout=timeout)


def dump_segments(files: list[Path], *options: str, timeout: float = 120.0) -> str:
    """Kafka's DumpLogSegments over any topic's segment ``files``, with ``options``: without any, one line per
    record batch (``baseOffset: ... count: N ... size: B ...``)."""
    argv = [paths.java_executable(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", paths.kafka_classpath()]
    argv += [DUMP_LOG_SEGMENTS, *options, "--files", ",".join(str(f) for f in files)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{DUMP_LOG_SEGMENTS} failed: {done.stderr[-2000:]}"
    return done.stdout


def parse(text: str) -> list[StateRecord]:
    """The transaction metadata records of the decoder's output, in its order (tombstones left out)."""
    found = []
    for line in text.splitlines():
        if not line.startswith(RECORD) or " key: " not in line or " payload: " not in line:
            continue
        key_text, _, payload_text = line.split(" key: ", 1)[1].partition(" payload: ")
        key, payload = json.loads(key_text), json.loads(payload_text)
        if not isinstance(payload, dict) or "transactionalId" not in key.get("data", {}):
            continue
        data = payload["data"]
        found.append(
            StateRecord(
                transactional_id=key["data"]["transactionalId"],
                producer_id=data["producerId"],
                epoch=data["producerEpoch"],
                state=STATES.get(data["transactionStatus"], str(data["transactionStatus"])),
                partitions=frozenset(
                    (t["topic"], p) for t in data.get("transactionPartitions") or [] for p in t["partitionIds"]
                ),
            )
        )
    return found


def transactions(records: list[StateRecord], wanted=lambda transactional_id: True) -> list[Transaction]:
    """The transactions of the ids ``wanted`` accepts: each a run of Ongoing records of one id (an id's records are
    in one partition, in the order written); any other state ends it."""
    steps: dict[str, list[frozenset[tuple[str, int]]]] = {}
    done: list[Transaction] = []
    for record in records:
        if not wanted(record.transactional_id):
            continue
        open_steps = steps.setdefault(record.transactional_id, [])
        if record.state == "Ongoing":
            open_steps.append(record.partitions)
        elif open_steps:
            done.append(Transaction(record.transactional_id, tuple(open_steps)))
            steps[record.transactional_id] = []
    done += [Transaction(tid, tuple(open_steps)) for tid, open_steps in steps.items() if open_steps]
    return done
