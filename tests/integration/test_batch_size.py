"""The producer's batch.size that the job chooses reaches the producer. With ``mirror.delivery.batch_size`` unset, a
job writing two partitions sends batches of up to 1 MiB (``secure_mirror.profile.delivery.batch_size_for``), where
every batch was capped at 256 KiB before. The judge is Kafka's own ``DumpLogSegments`` over the target broker's
segment files: the records of each batch it lists, of 1,000 incompressible bytes each."""

from __future__ import annotations

import subprocess

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.profile.delivery import SMALLEST_BATCH
from tests.support import seeds, transaction_log
from tests.support.mirror_case import MirrorCase

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
VALUE_BYTES = 1000
PER_PARTITION = 1500


def batch_counts(dump_text: str) -> list[int]:
    """The record count of each batch in DumpLogSegments' output (its ``baseOffset: ... count: N ...`` lines)."""
    return [int(line.split(" count: ", 1)[1].split()[0]) for line in dump_text.splitlines() if " count: " in line]


def test_a_job_writing_two_partitions_sends_batches_larger_than_256_kib(sandbox, tmp_path):
    rng = seeds.seeded("batch-size records")
    with MirrorCase(sandbox, tmp_path) as case:
        assert case.profile.mirror.delivery.batch_size is None  # left to the job
        case.create({"batches": 2})
        sent = [
            {"key": f"k{i}".encode(), "value": rng.randbytes(VALUE_BYTES), "partition": i % 2}
            for i in range(2 * PER_PARTITION)
        ]
        case.produce("batches", sent)
        run = subprocess.run(
            case.run_argv(tmp_path / "run", "--until-caught-up"), capture_output=True, text=True, timeout=600
        )
        assert run.returncode == EXIT_OK, run.stderr[-3000:]
        target = case.profile.target_topic(case.topic("batches"))
        files = sorted((sandbox.broker("target").base / "data").glob(f"{target}-*/*.log"))
        counts = batch_counts(transaction_log.dump_segments(files))
    assert sum(counts) == len(sent), counts  # every record, once (and the listing parsed)
    assert max(counts) * VALUE_BYTES > SMALLEST_BATCH, counts  # more than a batch of 256 KiB could hold
