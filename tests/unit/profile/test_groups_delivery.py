"""Groups follow the mirror through the target offsets the brokers acknowledge: a profile that asks for both groups
and ``acks: 0`` is refused (the sink could write no offset map), with the field and the fix."""

from __future__ import annotations

from tests.support.profiles import load, profile_data
from tests.unit.profile.test_profile import problems_of


def test_groups_with_acks_zero_are_refused(tmp_path):
    data = profile_data(tmp_path, groups={"include": "app.*"}, delivery={"acks": "0"})
    found = problems_of(tmp_path, data)
    assert len(found) == 1 and found[0].startswith("mirror.groups: ") and "mirror.delivery.acks: all" in found[0]


def test_groups_with_acknowledged_writes_and_acks_zero_without_groups_load(tmp_path):
    assert load(tmp_path, groups={"include": "app.*"}, delivery={"acks": "1"}).mirror.groups.enabled
    assert load(tmp_path, delivery={"acks": "0"}).mirror.delivery.acks == "0"
