"""A transaction coordinator killed while a transaction it coordinates is open, and the proof that it was open
(issue 58, point 6), for tests/reliability/test_three_broker_faults.py; no tests here.

- :func:`kill_while_open`: ``TransactionWatch.java`` (beside this module; run by Java's source launcher on Kafka's
  jars, as the side's admin) asks the coordinator to describe the mirror's transactional ids again and again and
  SIGKILLs the broker the moment one is ``Ongoing``; it prints that moment (the machine's clock, which the
  brokers share).
- :func:`state_records`: afterwards, the coordinator's own log of those ids, ``__transaction_state`` as another
  broker of the side holds it (Kafka's DumpLogSegments with its transaction-log decoder, tests/support/
  transaction_log.py), each record with the time the coordinator wrote it (its CreateTime).
- :func:`open_at`: the proof, a pure function: the last record of the id written before the kill is ``Ongoing``
  (the transaction had begun and neither PrepareCommit nor PrepareAbort had been written), and what came next.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from secure_mirror import paths
from secure_mirror.sandbox import kafka_tools, procs
from tests.support import transaction_log

WATCH = Path(__file__).with_name("TransactionWatch.java")


def kill_while_open(sb, side: str, node: int, ids: list[str], seconds: float = 120.0) -> dict:
    """Kill -9 ``side``'s broker ``node`` once one of ``ids`` is Ongoing at it (or after ``seconds`` without, then
    killed all the same): ``{killed_ms, id, since_ms, partitions, asks}`` or ``{none: text}`` and the watcher's
    output."""
    broker = sb.broker(side, node)
    argv = [
        paths.java_executable(),
        "-Xmx128m",
        "-XX:TieredStopAtLevel=1",
        f"-Djava.security.krb5.conf={sb.krb5_conf}",
        "-cp",
        paths.kafka_classpath(),
        str(WATCH),
        str(kafka_tools.admin_properties(sb, side)),
        broker.bootstrap,
        str(broker.pid),
        str(int(seconds)),
        *ids,
    ]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=seconds + 180,
        stdin=subprocess.DEVNULL,
        env=procs.inherited_env("JAVA_HOME"),
    )
    sb.kill_broker(side, node)  # nothing left to do when the watcher killed it; else the fault happens all the same
    return {**parse_watch(done.stdout), "exit": done.returncode, "said": (done.stdout + done.stderr)[-1500:]}


def parse_watch(text: str) -> dict:
    """The watcher's ``killed <pid> at <ms> <id> ongoing since <ms> partitions <n> after <asks> asks`` line."""
    for line in text.splitlines():
        words = line.split()
        if len(words) == 13 and words[0] == "killed" and words[2] == "at":
            return {
                "killed_ms": int(words[3]),
                "id": words[4],
                "since_ms": int(words[7]),
                "partitions": int(words[9]),
                "asks": int(words[11]),
            }
    return {"none": text.strip()[-300:]}


def state_records(sb, side: str, node: int, ids: list[str]) -> list[dict]:
    """Every record of ``__transaction_state`` for ``ids`` in broker ``node``'s copy, in the log's order:
    ``{id, state, epoch, written_ms}``."""
    files = transaction_log.segments(sb.broker(side, node).base / "data")
    return parse_states(transaction_log.dump(files), set(ids))


def parse_states(text: str, ids: set[str]) -> list[dict]:
    """DumpLogSegments' transaction-log lines of ``ids`` (tombstones left out), with their CreateTime."""
    found = []
    for line in text.splitlines():
        if not line.startswith(transaction_log.RECORD) or " payload: " not in line or " CreateTime: " not in line:
            continue
        written = int(line.split(" CreateTime: ", 1)[1].split()[0])
        key_text, _, payload_text = line.split(" key: ", 1)[1].partition(" payload: ")
        try:
            key, payload = json.loads(key_text), json.loads(payload_text)
        except ValueError:
            continue
        tid = key.get("data", {}).get("transactionalId")
        if tid not in ids or not isinstance(payload, dict):
            continue
        data = payload["data"]
        found.append(
            {
                "id": tid,
                "state": transaction_log.STATES.get(data["transactionStatus"], str(data["transactionStatus"])),
                "epoch": data["producerEpoch"],
                "written_ms": written,
            }
        )
    return found


def open_at(records: list[dict], transactional_id: str, at_ms: int) -> dict:
    """Whether ``transactional_id``'s transaction was open at ``at_ms``: its last record written at or before then
    is Ongoing (``open``), with that record (``before``), the first written after (``after``, or None) and the first
    after it in another state than Ongoing, how that transaction ended (``ended``: PrepareCommit, PrepareAbort,
    PrepareEpochFence ..., or None)."""
    mine = [r for r in records if r["id"] == transactional_id]
    before = [r for r in mine if r["written_ms"] <= at_ms]
    after = [r for r in mine if r["written_ms"] > at_ms]
    last = before[-1] if before else None
    return {
        "open": last is not None and last["state"] == "Ongoing",
        "before": last,
        "after": after[0] if after else None,
        "ended": next((r for r in after if r["state"] != "Ongoing"), None),
    }
