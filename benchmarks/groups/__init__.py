"""Consumer groups at the scale of an estate (issue 61): the group sync's pass, its cost to the brokers and how soon a
commit is on the target, against MirrorMaker 2's checkpoints and group offset sync over the same groups.

    scripts/bench --groups [--groups-count N] [--active N] [--repeats R] [--window S] [--seed S] [--sandbox DIR]

The estate (benchmarks/groups/estate.py, seeded): 20 topics of 10 partitions with 400 records each, a transactional
topic of 6 partitions; N groups, each on one topic: ``--active`` of them committing (each once per sync interval,
staggered: every pass finds them moved), 5 with a member on the source committing every second, 5 on the
transactional topic, the rest idle. Before each contender the groups are put back at their seeded start on the
source and deleted on the target, and the contender gets a source alias of its own (fresh target topics).

Each contender, once per repeat, in a seeded order: secure_mirror (at_least_once, ``mirror.groups`` over
``estate-.*`` at the sync interval) and MirrorMaker 2 as the profile renders it (its checkpoints and group offset
sync over the same groups at the same interval). Figures: the seconds until every group has its offsets on the target
and until every plain group's are exact; the brokers' CPU over a window with the active groups committing, less the
same window before the contender started; per commit of 20 active groups, the seconds until the target holds it;
after the contender stops, the records each plain group would read again or skip on the target; error lines in the
contender's log; our sync's pass seconds from the run's metrics file. Then pre-flight and ``groups`` over the
estate, timed.

Results: ``<out>/groups-<N>.{json,md}``. Not a test: it prints figures."""
