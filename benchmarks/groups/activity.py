"""What the estate does while a contender runs: the active groups commit (:class:`Committer`: each active group once
per ``period`` seconds, staggered, as an admin commit without members, as Flink's source commits), and the member
groups' consumers read their topics and commit every second (:class:`Members`)."""

from __future__ import annotations

import threading
import time

from benchmarks.groups.estate import Estate, Group, next_offsets
from benchmarks.harness import admin
from secure_mirror.kafka.admin_ops import LOG


class Committer:
    """``start()`` ... ``stop()``: every second, the active groups whose turn it is commit one record further;
    ``commits[group]`` holds (monotonic time, partition -> offset) of each commit of the ``watched`` groups."""

    def __init__(self, conf: dict, groups: list[Group], watched: list[str], period: int):
        self.conf, self.groups, self.period = conf, groups, period
        self.watched = set(watched)
        self.commits: dict[str, list[tuple[float, dict[int, int]]]] = {g: [] for g in watched}
        self.steps = {g.name: 0 for g in groups}
        self.errors = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        tick = 0
        while not self.stopping.wait(1.0 if tick else 0):
            due = [g for i, g in enumerate(self.groups) if i % self.period == tick % self.period]
            offsets = {}
            for g in due:
                self.steps[g.name] += 1
                offsets[g.name] = {g.topic: next_offsets(g, self.steps[g.name])}
            at = time.monotonic()
            self.errors += len(admin.commit_many(self.conf, offsets))
            for g in due:
                if g.name in self.watched:
                    self.commits[g.name].append((at, offsets[g.name][g.topic]))
            tick += 1

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(60)


class Members:
    """A consumer per member group, subscribed to its topic from the start, committing every second."""

    def __init__(self, conf: dict, estate: Estate):
        self.conf, self.groups = conf, estate.of("member")
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._consume, args=(g,), daemon=True) for g in self.groups]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def _consume(self, group: Group) -> None:
        from confluent_kafka import Consumer

        settings = {"group.id": group.name, "auto.offset.reset": "earliest", "auto.commit.interval.ms": 1000}
        consumer = Consumer({**self.conf, **settings, "logger": LOG})
        consumer.subscribe([group.topic])
        try:
            while not self.stopping.is_set():
                consumer.poll(0.5)
        finally:
            consumer.close()

    def stop(self) -> None:
        self.stopping.set()
        for t in self.threads:
            t.join(60)
