"""Thousands of partitions (issue 26): the mirror's cost as the partition count grows, beside MirrorMaker 2 and the
copy limit, on the sandbox.

    scripts/bench --scale [--partitions-list 1000,5000] [--topics-list 1,200] [--records N] [--tasks T] [--seed S]
                          [--contenders copy_limit,mirrormaker2,...] [--repeats R] [--timeout SECONDS] [--out DIR]
                          [--warm-ups N] [--read-ahead-kb KB] [--jfr DIR]

For every size (each partition count over each topic count: one topic of 1,000 partitions, 200 topics of 5, ...) the
source is loaded with the same N records (varied JSON values, seeded, spread over the topics), and every contender
copies them into freshly created LogAppendTime target topics, ``--repeats`` times, in an order shuffled anew for each
repeat (seeded: the seed is printed and written in the command). The contenders are the table of
``benchmarks/harness/contenders.py``, shared with ``scripts/bench``, at equal parallelism T: the copy limit (T loops),
MirrorMaker 2 without and with exactly-once (``tasks.max`` T), and the job (``local[T]``; with the mirror's source
``mirror.spark.tasks: T``) with ``at_least_once`` and ``exactly_once``, on its own source and (when named) on Spark's
Kafka source. A contender writing in transactions has finished when a read_committed reader of the target sees all N
records (``benchmarks/harness/committed.py``, the same count as ``scripts/bench``'s). Per run, from a measurement each
(see ``benchmarks/scale/probes.py``):
records/s start to end and steady (the target's append times between 10% and 90% of N), CPU seconds per million
records of its processes and of the brokers, the time to the first record on the target, the peak used heap of its
JVMs, the peak count of its established connections to each broker, the KDC's AS_REQ and TGS_REQ lines of its
principals while it ran, and for the job Spark's time per phase of each micro-batch (its metrics file). A contender
that has not finished within ``--timeout`` seconds is recorded with the records it got onto the target, and stopped.
Before the measured runs of a size, ``--warm-ups`` unmeasured copy-limit runs (default 1; their figures are kept
apart, and the report says how the first measured run compares with its own other repeats). Per contender and size,
each figure's median, minimum and maximum over its finished runs
(``benchmarks/harness/summary.py``). The disk under the sandbox reads ahead 128 KiB during the run (``--read-ahead-kb``,
``benchmarks/harness/read_ahead.py``, NOTES section 16), and ``--jfr`` keeps Flight Recordings of every run
(``scale/recording.py``).
Results: ``<out>/scale.{json,md}`` (the tables generated from the json, with the command
and seed).
"""
