"""tests/support/session_order.py: the unit tests first, the three-broker modules last and whole; a server stops
after the last test of the last module needing it."""

from __future__ import annotations

from dataclasses import dataclass

from tests.support import session_order


@dataclass
class Item:
    nodeid: str
    fixturenames: tuple[str, ...] = ()


ITEMS = [
    Item("tests/integration/test_a.py::one", ("sandbox",)),
    Item("tests/integration/test_three.py::one", ("three_brokers",)),
    Item("tests/integration/test_three.py::two"),  # its module moves whole
    Item("tests/integration/test_b.py::one", ("sandbox", "hadoop")),
    Item("tests/integration/test_b.py::two"),  # the module's fixtures end after it
    Item("tests/reliability/test_c.py::one", ("sandbox",)),
    Item("tests/unit/test_d.py::one"),
    Item("tests/reliability/test_faults.py::one", ("three_brokers",)),
]


def test_unit_first_three_brokers_last_each_group_in_its_order():
    assert [item.nodeid for item in session_order.order(ITEMS)] == [
        "tests/unit/test_d.py::one",
        "tests/integration/test_a.py::one",
        "tests/integration/test_b.py::one",
        "tests/integration/test_b.py::two",
        "tests/reliability/test_c.py::one",
        "tests/integration/test_three.py::one",
        "tests/integration/test_three.py::two",
        "tests/reliability/test_faults.py::one",
    ]


def test_a_server_stops_after_its_last_modules_last_test():
    ordered = session_order.order(ITEMS)
    assert session_order.last_users(ordered, session_order.STOPPED_EARLY) == {
        "sandbox": "tests/reliability/test_c.py::one",
        "hadoop": "tests/integration/test_b.py::two",
        "three_brokers": "tests/reliability/test_faults.py::one",
    }
