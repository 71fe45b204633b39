"""A leader just elected answers OFFSET_NOT_AVAILABLE until its high watermark has caught up: lag, verify and the
reliability harness's marks ask it again for a while rather than calling the partition unread
(kafka/admin_ops.asked_while_settling, which the sandbox's group_coordinator shares). Fed plain answers here; the
three-broker faults prove it live."""

from __future__ import annotations

import pytest

from secure_mirror.kafka import admin_ops
from secure_mirror.run import clients


class Settling(Exception):
    pass


class Clock:
    def __init__(self):
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def answers(*given):
    """A call that gives ``given`` in turn: an exception is raised, anything else returned."""
    left = list(given)

    def call():
        answer = left.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return call


def ask(call, seconds: float, clock: Clock):
    return admin_ops.asked_while_settling(
        call, lambda e: isinstance(e, Settling), seconds, sleep=clock.sleep, clock=lambda: clock.now
    )


def test_a_settling_leader_is_asked_again_until_it_answers():
    clock = Clock()
    assert ask(answers(Settling(), Settling(), (0, 42)), 30, clock) == (0, 42)
    assert clock.slept == [admin_ops.SETTLE_PAUSE] * 2


def test_any_other_error_is_raised_at_once():
    clock = Clock()
    with pytest.raises(KeyError):
        ask(answers(KeyError("gone"), (0, 1)), 30, clock)
    assert clock.slept == []


def test_a_leader_that_does_not_settle_within_the_time_gives_its_error():
    clock = Clock()
    with pytest.raises(Settling):
        ask(answers(*[Settling()] * 100), 3, clock)
    assert len(clock.slept) == 6  # asked at 0, 0.5 ... 3.0: the next pause would end past 3 s


def test_the_settling_errors_are_the_ones_a_moving_leader_gives():
    from confluent_kafka import KafkaError, KafkaException

    for code in (KafkaError.OFFSET_NOT_AVAILABLE, KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE):
        assert clients._settling(KafkaException(KafkaError(code)))
    assert not clients._settling(KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    assert not clients._settling(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
