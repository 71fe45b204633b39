"""How many task slots a continuous query needs (run/job/continuous.py ``too_few_slots``): the mirror's source runs
``mirror.tasks`` tasks (default: the slots), whatever the partitions; Spark's Kafka source one per partition."""

from __future__ import annotations

from secure_mirror.run.job.continuous import too_few_slots


def test_the_mirrors_source_needs_its_tasks_not_the_partitions():
    assert too_few_slots(2, True, None, topics=3, partitions=1000) is None
    assert too_few_slots(2, True, "2", topics=3, partitions=1000) is None
    message = too_few_slots(2, True, "6", topics=1, partitions=6)
    assert message is not None
    assert "mirror.spark.tasks is 6 and the job has 2 task slots" in message and "local[6]" in message


def test_sparks_kafka_source_needs_a_slot_per_partition():
    assert too_few_slots(6, False, None, topics=2, partitions=6) is None
    message = too_few_slots(2, False, None, topics=2, partitions=6)
    assert message is not None
    assert "the 2 topics have 6 partitions and the job has 2 task slots" in message
    assert "mirror.spark.source: mirror" in message and "local[6]" in message
