"""The Java Admin reader's protocol (jvm/tools/GroupOffsets.java), read by a pure function: its answers become what
``reading.committed`` gives, whatever characters the names hold."""

from __future__ import annotations

import base64

from secure_mirror.run.groups.java_offsets import answers, request_line


def _b(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_offsets_errors_and_groups_without_offsets():
    groups = ["a", "b\tc", "ünï", "gone"]
    tabbed, meta = _b("b\tc"), _b("meta\tdata")
    lines = [
        f"o\t{_b('a')}\t{_b('orders')}\t0\t12\t{_b('')}",
        f"o\t{_b('a')}\t{_b('orders')}\t7\t5\t{_b('')}",  # past the mirrored topic's partitions: left out
        f"o\t{_b('a')}\t{_b('other')}\t0\t3\t{_b('')}",  # a topic not mirrored: left out
        f"o\t{tabbed}\t{_b('orders')}\t1\t4\t{meta}",
        f"e\t{_b('ünï')}\tGROUP_AUTHORIZATION_FAILED\tGroup authorization failed.",
        f"o\t{_b('not asked')}\t{_b('orders')}\t0\t1\t{_b('')}",
    ]
    got = answers(lines, groups, {"orders": 2})
    assert got == {
        "a": {"offsets": {("orders", 0): (12, "")}, "error": None},
        "b\tc": {"offsets": {("orders", 1): (4, "meta\tdata")}, "error": None},
        "ünï": {"offsets": {}, "error": "GROUP_AUTHORIZATION_FAILED: Group authorization failed."},
        "gone": {"offsets": {}, "error": None},
    }


def test_a_request_that_failed_as_a_whole_is_none():
    assert answers(["f\tTimeoutException\tno coordinator"], ["a"], {"orders": 1}) is None


def test_the_request_line_carries_any_group_name():
    line = request_line(["a", "b\tc", "x\ny"])
    assert "\n" not in line and [base64.b64decode(f).decode() for f in line.split("\t")] == ["a", "b\tc", "x\ny"]


def test_no_java_yet_is_tried_again_and_a_failed_jvm_is_not(monkeypatch):
    from secure_mirror.errors import EnvironmentNotReady
    from secure_mirror.run.groups.java_offsets import JavaOffsets, NotYet

    reader = JavaOffsets(None, "source", None, {})  # type: ignore[arg-type]
    starts: list[str] = []

    def missing():
        starts.append("missing")
        raise NotYet("Java or Kafka's Java client is not on this machine")

    monkeypatch.setattr(reader, "_start", missing)
    assert reader.committed(["a"], {"t": 1}) is None and reader.committed(["a"], {"t": 1}) is None
    assert starts == ["missing", "missing"] and not reader.given_up and "not on this machine" in str(reader.failed)

    def ended():
        starts.append("ended")
        raise OSError("the JVM ended")

    monkeypatch.setattr(reader, "_start", ended)
    assert reader.committed(["a"], {"t": 1}) is None and reader.committed(["a"], {"t": 1}) is None
    assert starts == ["missing", "missing", "ended"] and reader.given_up and reader.failed == "the JVM ended"

    compiled_not = JavaOffsets(None, "source", None, {})  # type: ignore[arg-type]

    def not_compiled():
        raise EnvironmentNotReady("compiling GroupOffsets.java failed: ...")

    monkeypatch.setattr(compiled_not, "_start", not_compiled)
    assert compiled_not.committed(["a"], {"t": 1}) is None and compiled_not.given_up  # not compiled again each pass
