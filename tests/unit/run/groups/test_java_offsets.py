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
        f"c\t{_b('gone')}",  # no offset committed now
    ]
    got = answers(lines, groups, {"orders": 2})
    assert got == {
        "a": {"offsets": {("orders", 0): (12, "")}, "error": None},
        "b\tc": {"offsets": {("orders", 1): (4, "meta\tdata")}, "error": None},
        "ünï": {"offsets": {}, "error": "GROUP_AUTHORIZATION_FAILED: Group authorization failed."},
        "gone": {"offsets": {}, "error": None},
    }


def test_an_answer_names_only_the_groups_that_changed_and_the_reader_keeps_the_rest():
    said: dict = {}
    first = [
        f"o\t{_b('idle')}\t{_b('orders')}\t0\t7\t{_b('m')}",
        f"o\t{_b('idle')}\t{_b('orders')}\t3\t9\t{_b('')}",  # past the partitions now: kept, not given
        f"o\t{_b('busy')}\t{_b('orders')}\t1\t4\t{_b('')}",
        f"c\t{_b('empty')}",
    ]
    got = answers(first, ["idle", "busy", "empty"], {"orders": 2}, said)
    assert got is not None and got["idle"]["offsets"] == {("orders", 0): (7, "m")}
    # the next answer names busy alone (it moved) and a refused group; idle and empty are as said before
    second = [f"o\t{_b('busy')}\t{_b('orders')}\t1\t6\t{_b('')}", f"e\t{_b('idle')}\tTimeoutException\tslow"]
    got = answers(second, ["idle", "busy", "empty"], {"orders": 4}, said)
    assert got == {
        "idle": {"offsets": {}, "error": "TimeoutException: slow"},
        "busy": {"offsets": {("orders", 1): (6, "")}, "error": None},
        "empty": {"offsets": {}, "error": None},
    }
    assert "idle" not in said  # a refused group is said in full at its next answer
    # a group the tool did not name and never said: the tool and this reader disagree, as a failed request
    assert answers([], ["idle"], {"orders": 4}, said) is None
    assert answers([f"o\t{_b('idle')}\t{_b('orders')}\t3\t9\t{_b('')}"], ["idle"], {"orders": 4}, said) == {
        "idle": {"offsets": {("orders", 3): (9, "")}, "error": None}
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


def test_each_answer_is_handed_over_whole_and_the_end_of_the_jvm_is_said():
    import io
    from types import SimpleNamespace

    import pytest

    from secure_mirror.run.groups.java_offsets import JavaOffsets

    reader = JavaOffsets(None, "source", None, {})  # type: ignore[arg-type]
    first = [f"o\t{_b('a')}\t{_b('orders')}\t{p}\t{p + 10}\t{_b('')}" for p in range(3)]
    out = io.StringIO("\n".join([*first, "end", f"e\t{_b('b')}\tTimeoutException\tno answer", "end", ""]))
    reader._read(SimpleNamespace(stdout=out))  # type: ignore[arg-type]  # what the JVM wrote, then its end
    assert reader._answer(1.0) == first
    assert reader._answer(1.0) == [f"e\t{_b('b')}\tTimeoutException\tno answer"]
    with pytest.raises(OSError, match="the JVM ended"):
        reader._answer(1.0)
    with pytest.raises(TimeoutError, match="no answer within 0.01 s"):
        reader._answer(0.01)


def test_an_answer_that_leaves_out_a_group_never_said_gives_the_jvm_up_and_says_why(monkeypatch):
    from secure_mirror.run.groups.java_offsets import JavaOffsets

    class Stdin:
        def write(self, _text: str) -> None: ...

        def flush(self) -> None: ...

    reader = JavaOffsets(None, "source", None, {})  # type: ignore[arg-type]
    reader.proc = type("Proc", (), {"stdin": Stdin(), "poll": lambda self: 0})()  # type: ignore[assignment]
    monkeypatch.setattr(reader, "_answer", lambda _timeout: [])  # "end" at once: the group asked is not named
    assert reader.committed(["a"], {"orders": 1}) is None
    assert reader.given_up and "disagree" in str(reader.failed)
