"""The order of a test session, and when its shared servers stop (tests/conftest.py applies both).

The unit tests run first, while no server is up; the three-broker suites last, together, so their second sandbox
(six brokers, its own KDC) runs only while they do. A session-scoped server (the sandbox, its Hadoop daemons, the
old broker, the three-broker sandbox) stops once the last module needing it has ended, not at the session's end:
the idle JVMs of one suite no longer share the machine's two CPUs with the suites after it.

Whole modules move, never single tests, so a module's own fixtures are set up once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

THREE_BROKERS = "three_brokers"
# In the order they stop when their last users end together: what runs beside the sandbox before the sandbox.
STOPPED_EARLY = ("old_bootstrap", "hadoop", THREE_BROKERS, "sandbox")


class Item(Protocol):
    nodeid: str
    fixturenames: Sequence[str]


def module_of(item: Item) -> str:
    return item.nodeid.split("::")[0]


def order(items: Sequence[Item]) -> list[Item]:
    """``items`` with the unit tests' modules first and the three-broker modules last, each group in its order."""
    three = {module_of(item) for item in items if THREE_BROKERS in item.fixturenames}

    def rank(item: Item) -> int:
        module = module_of(item)
        return 0 if module.startswith("tests/unit/") else 2 if module in three else 1

    return sorted(items, key=rank)  # stable: each group keeps pytest's order


def last_users(items: Sequence[Item], names: Iterable[str]) -> dict[str, str]:
    """Fixture name -> the node id of the last test of the last module any of whose tests needs it (a module's
    fixtures end with its last test)."""
    last_of_module = {module_of(item): item.nodeid for item in items}
    found: dict[str, str] = {}
    for item in items:
        for name in names:
            if name in item.fixturenames:
                found[name] = last_of_module[module_of(item)]
    return found
