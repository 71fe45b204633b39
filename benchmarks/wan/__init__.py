"""The mirror across a link (``scripts/bench --wan 0,25,50,100[:MBIT]``): the sandbox's source brokers behind
Toxiproxy (``sandbox up --wan``, docs/wan.md), which adds a round trip and, with ``:MBIT``, caps the link's
bandwidth, as the mirror sees them from another region; the loads and the target stay direct.

On one sandbox and one loaded source topic, ``--warm-ups`` unmeasured copy-limit runs (default 1: on a fresh sandbox
every contender ran slower at the first link than at the next), then for each link in turn (the proxy's toxics and
the cap changed between them):

- the link's round trip as measured (pre-flight's probe, ``preflight/probes/round_trip.py``): the latency was there;
- every contender ``--repeats`` times in a shuffled order (seeded; the seed printed): the copy limit, MirrorMaker 2 as
  the profile renders it and with Kafka's client defaults, the job with ``at_least_once`` and ``exactly_once``; each
  run's start-to-end and steady records/s and its first record, as ``scripts/bench`` measures them
  (``benchmarks/harness/bench.py``), and the median of each over the repeats;
- latency, source create time to target append time at a steady input rate (``benchmarks/comparison/latency.py``):
  MirrorMaker 2 and the job in both guarantees, p50 and p99; and, unless ``--no-continuous``, the job's low-latency
  continuous mode (docs/continuous.md) beside MirrorMaker 2 with the same producer setting (linger 0);
  ``--latency-repeats`` runs of each per link, medians;
- under a shared cap, the bytes that crossed the link downstream in each run, per record, and the link's rate while
  it was busy (``steady_link_mbit``).

What the proxy does not reproduce: TCP's windows over the distance (Toxiproxy ends each TCP connection on loopback,
so receive buffers see loopback's round trip), loss, reordering and jitter. A cap is shared by every connection (an
HTB class each way on ``lo``) where ``tc`` can, else a bandwidth toxic on each connection (docs/wan.md).

    scripts/bench --wan 0,25,50,100[:MBIT] [--records N] [--partitions P] [--repeats R] [--warm-ups N]
                  [--latency-records N] [--latency-repeats N] [--no-continuous] [--contenders a,b] [--seed S]
                  [--out DIR]
"""
