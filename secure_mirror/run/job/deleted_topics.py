"""Topics that went away while the job runs: a source topic deleted (Spark's Kafka source would wait for ever once
none is left) or a target topic deleted (its producer would retry for as long as the job rides through)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from secure_mirror.run.job.outcome import SOURCE_GONE, TARGET_GONE, JobRefused
from secure_mirror.run.job.planning import TopicPlanner
from secure_mirror.run.metrics_line import parse_offsets


def confirmed_gone(before: list[str], now: list[str]) -> list[str]:
    """The target topics missing at two looks in a row (a broker just started again may not know a topic yet)."""
    return sorted(set(before) & set(now))


class DeletedTopicWatch:
    """Spark's Kafka source plans no batch once none of its topics is left, so ``failOnDataLoss`` never fires when
    the last source topic is deleted and the query would wait for ever. Every ``interval`` seconds this checks that
    the topics the query has read from still exist on the source, and that the target topics it writes still exist
    on the target (a producer writing a deleted topic would retry for as long as the job rides through a bad
    minute); ``refused`` says which one is gone."""

    def __init__(
        self, query, planner: TopicPlanner, interval: float = 10.0, topics: Callable[[], set[str]] | None = None
    ):
        self.query, self.planner, self.interval = query, planner, interval
        # the topics to check: by default those of the query's last progress (a continuous query reports none)
        self.topics = topics or (lambda: read_topics(self.query.lastProgress))
        self.next_check = time.monotonic() + interval
        self.refused: JobRefused | None = None
        self.target_missing: list[str] = []  # at the last look

    def __call__(self) -> bool:
        """True when the query must stop."""
        if self.refused is None and time.monotonic() >= self.next_check:
            self.next_check = time.monotonic() + self.interval
            try:
                gone = self.planner.gone(self.topics())
            except JobRefused as refused:
                self.refused = refused
            except Exception:  # noqa: BLE001 - the source did not answer this time; ask again later
                return False
            else:
                if gone:
                    verb = "is" if len(gone) == 1 else "are"
                    self.refused = JobRefused(SOURCE_GONE.format(f"{', '.join(gone)} {verb} no longer on the source"))
                    return True
            self._look_at_the_target()
        return self.refused is not None

    def _look_at_the_target(self) -> None:
        try:
            missing = self.planner.target_gone()
        except Exception:  # noqa: BLE001 - the target did not answer this time (the ride watch says so); ask again
            return
        gone, self.target_missing = confirmed_gone(self.target_missing, missing), missing
        if gone:
            self.refused = JobRefused(TARGET_GONE.format(", ".join(gone)))
            if self.query is not None:  # now: the batch writing that topic would not end before the ride is spent
                self.query.stop()


def read_topics(progress) -> set[str]:
    """The topics in the offsets the query has reached (its last progress's ``endOffset``)."""
    if progress is not None and hasattr(progress, "json"):
        progress = json.loads(progress.json)
    return {
        topic for source in (progress or {}).get("sources") or [] for topic, _ in parse_offsets(source.get("endOffset"))
    }
