"""secure_mirror against MirrorMaker 2 and a plain copy, in one run, on the sandbox.

Every contender mirrors the same source topic (varied JSON values, seeded) into a freshly created target topic with
LogAppendTime, and is measured on the same clocks and axes:

- start to end: from its process start to the moment the target holds all N records (for a contender writing in
  transactions, exactly_once and MirrorMaker 2 with exactly-once: the moment a read_committed reader sees all N,
  ``benchmarks/harness/committed.py``, the same count as ``--scale``'s);
- steady: its rate from the target's own append times (the records appended between the moments 10% and 90% of N
  were on the target), the same window for every contender;
- CPU: the CPU seconds of its own processes (the process it starts and all their descendants, read from /proc when
  the last record is on the target) per million records, and beside it those the two brokers spent while it ran.

The contenders are the table of ``benchmarks/harness/contenders.py``, shared with ``--scale`` (``--contenders a,b``; by
default the copy limit, MirrorMaker 2 without and with exactly-once, the job with ``at_least_once`` and with
``exactly_once``), each at as many tasks as the job has task slots. The order is shuffled in every repeat (seeded; the
seed is printed). A long round (``--long-records``, default 10,000,000 in the full run) runs each contender once more
over a larger topic, where start-up is paid once. Latency (source create time -> target append time at a steady
input rate) compares MirrorMaker 2 with the job's micro-batches, its exactly_once transactions and its low-latency
continuous mode. Figures are ratios measured side by side: absolute numbers on shared machines drift.

    scripts/bench [--quick] [--records N] [--long-records N] [--partitions P] [--repeats R] [--seed S]
                  [--contenders copy_limit,mirrormaker2,...]
    scripts/bench --profile      Java Flight Recorder on the job's and MirrorMaker 2's steady state
"""
