"""tests/support/transaction_log.py reads what Kafka's decoder printed of ``__transaction_state``: fed with output
captured on the sandbox (transaction-log-dump.txt: ``kafka.tools.DumpLogSegments --transaction-log-decoder`` over a
target broker's segments, kept to the records of three exactly_once jobs of 32 partitions and two tasks). One job
enlisted each task's 16 partitions at once; one ran a sink whose enlister did not resolve, so each partition was
added as its first record was sent; one ran the sink before its enlisting held the transaction manager's lock, and
there the sender sent one task's first enlisted partition alone."""

from __future__ import annotations

from pathlib import Path

from tests.support.transaction_log import StateRecord, Transaction, parse, transactions

DUMP = (Path(__file__).with_name("transaction-log-dump.txt")).read_text()
PREFIX = "secure-mirror-src-tgt-eos-task#"
ENLISTED, FALLBACK, SPLIT = "1767d9a5", "919a7cd6", "9ff6ad35"  # the three jobs' keys
TOPICS = {ENLISTED: "src.t6e0f6f61.wide", FALLBACK: "src.t1f1655f6.wide", SPLIT: "src.t59be2492.wide"}


def _of(job: str) -> list[Transaction]:
    return sorted(transactions(parse(DUMP), lambda tid: tid.startswith(f"{PREFIX}{job}#")), key=lambda t: t.steps)


def test_each_record_is_read_with_its_id_producer_state_and_partitions():
    records = parse(DUMP)
    assert len(records) == 60  # the batch lines and the "Dumping" line are not records
    assert records[0] == StateRecord(f"{PREFIX}{SPLIT}#0", 1, 0, "Empty", frozenset())
    ongoing = records[1]
    assert (ongoing.state, ongoing.partitions) == ("Ongoing", frozenset((TOPICS[SPLIT], p) for p in range(1, 32, 2)))
    assert [r.state for r in records[2:5]] == ["Ongoing", "PrepareCommit", "CompleteCommit"]
    assert records[2].partitions == ongoing.partitions | {("__consumer_offsets", 4)}  # the position group's, last
    assert records[4].partitions == frozenset()


def test_a_transaction_enlisted_at_once_lists_all_its_partitions_in_its_first_ongoing_record():
    found = _of(ENLISTED)
    assert len(found) == 2
    for transaction in found:
        steps = transaction.of(TOPICS[ENLISTED])
        assert len(steps[0]) == 16 and steps[0] == steps[-1]
        assert len(transaction.steps) == 2  # the second adds __consumer_offsets only


def test_without_enlisting_a_transaction_adds_its_partitions_one_round_trip_at_a_time():
    for transaction in _of(FALLBACK):
        steps = transaction.of(TOPICS[FALLBACK])
        assert len(steps[0]) == 1 and len(steps[-1]) == 16
        assert len(set(steps)) >= 15  # the set grew at 15 or 16 of its Ongoing records
        assert all(a <= b for a, b in zip(steps, steps[1:]))


def test_an_enlisting_split_over_two_requests_shows_as_a_first_record_with_fewer_partitions():
    first = {t.transactional_id[-1]: t.of(TOPICS[SPLIT])[0] for t in _of(SPLIT)}
    assert first == {"0": frozenset(range(1, 32, 2)), "1": frozenset({30})}


def test_any_state_but_ongoing_ends_a_transaction_and_other_ids_are_left_out():
    records = [
        StateRecord("a", 1, 0, "Ongoing", frozenset({("t", 0)})),
        StateRecord("b", 2, 0, "Ongoing", frozenset({("t", 5)})),
        StateRecord("a", 1, 0, "Ongoing", frozenset({("t", 0), ("t", 1)})),
        StateRecord("a", 1, 0, "PrepareAbort", frozenset({("t", 0), ("t", 1)})),
        StateRecord("a", 1, 0, "CompleteAbort", frozenset()),
        StateRecord("a", 1, 0, "Ongoing", frozenset({("t", 2)})),
    ]
    assert transactions(records, lambda tid: tid == "a") == [
        Transaction("a", (frozenset({("t", 0)}), frozenset({("t", 0), ("t", 1)}))),
        Transaction("a", (frozenset({("t", 2)}),)),
    ]
