"""Cut-over (issue 41): the time of ``secure-mirror cutover`` for 20 topics and 50 groups on the sandbox, from the end
of its drain, against MirrorMaker 2's documented manual procedure on the same scenario; records re-read by each
group on the target, and the steps an operator does by hand.

    scripts/bench --cutover [--seed N] [--sandbox DIR] [--out DIR]

The scenario (seeded), built for each contender with names of its own (topics, groups, principals, source alias):

- 20 source topics of 2 to 4 partitions, each partition written by the admin with a seeded number of records;
- 4 producer principals (created in the sandbox KDC), each with a LITERAL ALLOW WRITE on 5 of the topics (given by
  the sandbox admin); 5 reader principals with READ on the topics and groups of their 10 groups;
- 50 consumer groups, each of 1 to 3 topics, having committed a seeded offset of each of their partitions on the
  source before the mirror starts (MirrorMaker 2 lists groups when it starts);
- the mirror starts and catches up; then the producers write their topics under their own names, a record every
  50 ms, until the source's authorizer refuses one.

secure_mirror (exactly_once, ``mirror.groups`` selecting the 50 groups, its intervals the defaults):
``secure-mirror run PROFILE --run-dir DIR`` then ``secure-mirror cutover PROFILE --all-groups --as-admin ...
--run-dir DIR``; each step's time from ``DIR/cutover-report.json``.

MirrorMaker 2 (``emit.checkpoints.enabled``, ``sync.group.offsets.enabled``, the groups, the intervals of
benchmarks/failover/), the procedure of Kafka's documentation and KIP-382, done here as an operator would, each
step timed: remove the producers' WRITE grants on the source (one ``kafka-acls --remove`` per producer), wait until
the target holds every record (end offsets equal), wait until checkpoints are emitted and group offsets synced on
the target, stop MirrorMaker 2, grant the producers and the readers on the target (one ``kafka-acls --add`` per
principal). The wait for the group offsets is given two figures: when the target's offsets last changed (what an
oracle would know) and the wait an operator needs to be sure (one checkpoint interval and one sync interval after
the drain, as the intervals are independent).

Re-reads: each target topic is read once from its start (read_committed); for each group and partition, the records
at or after the group's committed offset on the target (what its consumer reads from there; a missing or
out-of-range offset is reported, where ``auto.offset.reset=error`` would fail) are compared with what the group had
not consumed on the source: records read again, records skipped.

Results: ``<out>/cutover.{json,md}``. Not a test: it prints figures.
"""
