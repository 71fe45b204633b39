"""``admin_ops.asked_in_flight``: requests asked IN_FLIGHT at a time, the next ones only once the caller has taken
those before, and a request that could not be asked handed over as its answer (pure: the asking is a list here)."""

from __future__ import annotations

from secure_mirror.kafka.admin_ops import IN_FLIGHT, asked_in_flight


def test_at_most_in_flight_are_asked_before_the_caller_reads_them():
    asked: list[int] = []
    taken: list[int] = []

    def ask(key: int) -> str:
        asked.append(key)
        if key == 3:
            raise RuntimeError("refused")
        return f"future {key}"

    answers = {}
    for key, future in asked_in_flight(list(range(2 * IN_FLIGHT + 7)), ask):
        assert len(asked) - len(taken) <= IN_FLIGHT  # never more than IN_FLIGHT asked and not yet taken
        taken.append(key)
        answers[key] = future
    assert taken == list(range(2 * IN_FLIGHT + 7))
    assert answers[0] == "future 0" and isinstance(answers[3], RuntimeError)
