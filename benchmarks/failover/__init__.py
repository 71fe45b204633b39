"""Failover (issue 28): how many records a consumer group reads again, or skips, on the target, and how long its
commit on the source takes to reach the target, secure_mirror against MirrorMaker 2, on the sandbox.

    scripts/bench --failover [--seed N] [--sandbox DIR] [--out DIR]

For each contender (secure_mirror in at_least_once and exactly_once with ``mirror.groups`` selecting the group, its
sync interval the default; MirrorMaker 2 with ``emit.checkpoints.enabled`` and ``sync.group.offsets.enabled``, its
intervals the defaults, from the mm2.properties that ``render`` writes), one after another, each with a source topic,
a consumer group and a source alias of its own (so no two write the same target topics, checkpoints or map):

1. a source topic of 6 partitions written by a transactional producer that aborts some transactions, with plain
   records between (the layout seeded, the same in every partition; each value names its partition and record);
2. the group commits offset 0 everywhere before the mirror starts (MirrorMaker 2 lists the groups when it starts and
   then only every ``refresh.groups.interval.seconds``, 10 minutes), then, once the mirror is running and caught up,
   commits a first point of each partition (half of the final one), then the final one: per partition, at the end,
   half way, right before an aborted transaction (at the commit marker before it), inside an aborted transaction,
   at a seeded point, and none (0);
3. after each of the two commits the target's committed offsets of the group are asked every 0.5 s: per partition
   whose source offset moved, the seconds until the target's offset moved, and until it was the exact translation
   (any target offset from which a read_committed reader reads exactly the records the group had not consumed);
4. the contender is stopped, and a consumer of the group on the target reads from its committed offsets to the end
   (``auto.offset.reset=error``; a partition without a committed offset is reported as such): records read again
   (consumed on the source) and skipped (not consumed on the source, not read on the target), per partition.

Results: ``<out>/failover.{json,md}``. Not a test: it prints figures.
"""
