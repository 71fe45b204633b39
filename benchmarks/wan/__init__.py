"""The mirror across a link (``scripts/bench --wan 0,25,50,100[:MBIT]``): the sandbox's source brokers behind
Toxiproxy (``sandbox up --wan``, docs/wan.md), which adds a round trip and, with ``:MBIT``, caps each connection's
bandwidth, as the mirror sees them from another region; the loads and the target stay direct.

On one sandbox and one loaded source topic, for each link in turn (the proxy's toxics changed between them):

- the link's round trip as measured (pre-flight's probe, ``preflight/probes/round_trip.py``): the latency was there;
- every contender ``--repeats`` times in a shuffled order (seeded; the seed printed): the copy limit, MirrorMaker 2 as
  the profile renders it and with Kafka's client defaults, the job with ``at_least_once`` and ``exactly_once``; each
  run's start-to-end and steady records/s and its first record, as ``scripts/bench`` measures them
  (``benchmarks/harness/bench.py``), and the median of each over the repeats;
- latency, source create time to target append time at a steady input rate (``benchmarks/comparison/latency.py``):
  MirrorMaker 2 and the job in both guarantees, p50 and p99; and, unless ``--no-continuous``, the job's low-latency
  continuous mode (docs/continuous.md) beside MirrorMaker 2 with the same producer setting (linger 0). One run of
  each per link (not medians).

What the proxy does not reproduce: TCP's windows over the distance (Toxiproxy ends each TCP connection on loopback,
so receive buffers see loopback's round trip) and a cap shared by every connection (its bandwidth toxic caps each
connection on its own).

    scripts/bench --wan 0,25,50,100 [--records N] [--partitions P] [--repeats R] [--latency-records N]
                  [--no-continuous] [--contenders a,b] [--seed S] [--out DIR]
"""
