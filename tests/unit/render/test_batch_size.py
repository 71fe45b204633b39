"""The producer's batch.size when a profile leaves ``mirror.delivery.batch_size`` unset: the job sizes it from the
partitions it writes (``secure_mirror.profile.delivery.batch_size_for``), so that each of them can hold a batch at once
in the producer's pool: 1 MiB for up to 32 partitions with Kafka's 32 MiB pool, 256 KiB from 128 on (as before), a
larger ``buffer.memory`` in ``target.client_options`` moving the bounds. A profile's own batch_size is kept as it is,
for the job and MirrorMaker 2; MirrorMaker 2, whose partitions render cannot know, gets 256 KiB when it is unset."""

from __future__ import annotations

import pytest

from secure_mirror.profile import load_profile
from secure_mirror.profile.delivery import KAFKA_BUFFER_MEMORY, LARGEST_BATCH, SMALLEST_BATCH, batch_size_for
from secure_mirror.render import spark
from secure_mirror.render.mm2 import mm2_settings
from tests.support import profiles as pf
from tests.support import seeds

MIB = 1_048_576


@pytest.mark.parametrize(
    ("partitions", "pool", "expected"),
    [
        (None, KAFKA_BUFFER_MEMORY, SMALLEST_BATCH),  # the first batch's partitions unknown: as before
        (0, KAFKA_BUFFER_MEMORY, SMALLEST_BATCH),
        (1, KAFKA_BUFFER_MEMORY, MIB),
        (6, KAFKA_BUFFER_MEMORY, MIB),
        (32, KAFKA_BUFFER_MEMORY, MIB),
        (33, KAFKA_BUFFER_MEMORY, KAFKA_BUFFER_MEMORY // 33),
        (64, KAFKA_BUFFER_MEMORY, MIB // 2),
        (128, KAFKA_BUFFER_MEMORY, SMALLEST_BATCH),
        (5000, KAFKA_BUFFER_MEMORY, SMALLEST_BATCH),
        (1000, 192 * MIB, SMALLEST_BATCH),
        (100, 192 * MIB, MIB),
        (6, 0, SMALLEST_BATCH),
    ],
)
def test_the_batch_size_for_the_partitions_and_pool(partitions, pool, expected):
    assert batch_size_for(partitions, pool) == expected


def test_every_partition_holds_a_batch_in_the_pool_whenever_the_smallest_batch_allows_it():
    rng = seeds.seeded("batch sizes")
    for _ in range(2000):
        partitions = rng.randint(1, 20_000)
        pool = rng.choice([KAFKA_BUFFER_MEMORY, rng.randint(1, 512 * MIB)])
        size = batch_size_for(partitions, pool)
        assert SMALLEST_BATCH <= size <= LARGEST_BATCH
        if pool // partitions >= SMALLEST_BATCH:
            assert size * partitions <= pool, (partitions, pool, size)
        else:
            assert size == SMALLEST_BATCH, (partitions, pool, size)


def _profile(tmp_path, batch_size: int | None = None, pool: object = None):
    data = pf.profile_data(tmp_path)
    if batch_size is not None:
        data["mirror"].setdefault("delivery", {})["batch_size"] = batch_size
    if pool is not None:
        data["target"].setdefault("client_options", {})["buffer.memory"] = pool
    return load_profile(pf.write_profile(tmp_path, data))


def test_unset_the_job_sizes_it_for_the_first_batchs_partitions_and_mirrormaker_2_gets_256_kib(tmp_path):
    profile = _profile(tmp_path)
    options = spark.sink_options(profile)
    assert spark.SINK_BATCH_SIZE not in options
    assert spark.with_batch_size(options, 6)[spark.SINK_BATCH_SIZE] == str(MIB)
    assert spark.with_batch_size(options, 1000)[spark.SINK_BATCH_SIZE] == str(SMALLEST_BATCH)
    assert spark.with_batch_size(options, None)[spark.SINK_BATCH_SIZE] == str(SMALLEST_BATCH)
    assert spark.SINK_BATCH_SIZE not in options  # the rendered options are not changed
    assert mm2_settings(profile)[0][f"{profile.target.alias}.producer.batch.size"] == str(SMALLEST_BATCH)


def test_the_target_pool_moves_the_bounds(tmp_path):
    options = spark.sink_options(_profile(tmp_path, pool=192 * MIB))
    assert spark.with_batch_size(options, 100)[spark.SINK_BATCH_SIZE] == str(MIB)


def test_a_pool_that_is_no_whole_number_counts_as_kafkas_default(tmp_path):
    options = {**spark.sink_options(_profile(tmp_path)), "kafka.buffer.memory": "lots"}
    assert spark.with_batch_size(options, 64)[spark.SINK_BATCH_SIZE] == str(MIB // 2)


def test_a_profiles_batch_size_is_kept_for_the_job_and_mirrormaker_2(tmp_path):
    profile = _profile(tmp_path, batch_size=65536)
    options = spark.sink_options(profile)
    assert options[spark.SINK_BATCH_SIZE] == "65536"
    assert spark.with_batch_size(options, 6)[spark.SINK_BATCH_SIZE] == "65536"
    assert mm2_settings(profile)[0][f"{profile.target.alias}.producer.batch.size"] == "65536"
