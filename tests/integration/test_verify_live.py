"""verify against the sandbox without Spark: the target is filled by hand and the checkpoint is written as
Spark writes it, so each kind of difference can be staged exactly; lag reads the same checkpoint. Their --json is
validated against the committed schemas."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from secure_mirror.errors import EXIT_FAILED
from secure_mirror.kafka import admin_ops
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase, records
from tests.support.output_schemas import assert_valid

pytestmark = [pytest.mark.sandbox]


def _checkpoint(folder, offsets: dict[str, dict[int, int]]) -> None:
    for name in ("offsets", "commits"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    data = {topic: {str(p): o for p, o in parts.items()} for topic, parts in offsets.items()}
    (folder / "offsets" / "0").write_text('v1\n{"batchWatermarkMs":0}\n' + json.dumps(data))
    (folder / "commits" / "0").write_text("v1\n{}")


def test_verify_match_then_missing_extra_and_duplicated(sandbox, tmp_path):
    with MirrorCase(sandbox, tmp_path) as case:
        source, target = case.topic("v"), f"src.{case.topic('v')}"
        case.create({"v": 2})
        sandbox.admin("target", admin_ops.create_topics, {target: 2})
        data = records(40, 2, "v")
        case.produce("v", data)
        copy = [{**r, "headers": (r["headers"] or []) + [("secure-mirror.offset", b"1")]} for r in data]
        case.produce(target, copy, side="target")  # provenance headers are not part of the comparison
        _checkpoint(tmp_path / "checkpoint", {source: {0: 20, 1: 20}})
        result = verify(case.profile)
        assert result.ok and result.to_dict()["source_records"] == 40, result.text()

        case.produce("v", [{"key": b"late", "value": b"1", "partition": 0}])  # beyond the checkpoint: ignored
        case.produce(target, [{"key": b"intruder", "value": b"x", "partition": 1}, {**data[3]}], side="target")
        _checkpoint(tmp_path / "checkpoint", {source: {0: 21, 1: 20}})  # now "late" counts, and is missing
        proc = subprocess.run(
            [sys.executable, "-m", "secure_mirror", "verify", str(case.profile_path), "--json"],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == EXIT_FAILED, proc.stderr
        assert_valid("verify", proc.stdout)
        report = json.loads(proc.stdout)
        summary = {(c["partition"], c["missing"], c["extra"], c["duplicated"]) for c in report["comparisons"]}
        assert summary == {(0, 1, 0, 0), (1, 0, 1, 1)}
        examples = {e["kind"]: e for c in report["comparisons"] for e in c["examples"]}
        assert examples["missing"]["key"] == "late" and examples["missing"]["offset"] == 20
        assert examples["extra"]["key"] == "intruder"
        assert examples["duplicated"]["key"] == data[3]["key"].decode()
        lag = subprocess.run(  # lag reads the same checkpoint and the source's end offsets
            [sys.executable, "-m", "secure_mirror", "lag", str(case.profile_path), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert lag.returncode == 0, lag.stderr
        assert_valid("lag", lag.stdout)
        rows = json.loads(lag.stdout)["partitions"]
        assert {(r["partition"], r["offset"], r["lag"]) for r in rows if r["topic"] == source} == {
            (0, 21, 0),
            (1, 20, 0),
        }
        text = subprocess.run(
            [sys.executable, "-m", "secure_mirror", "verify", str(case.profile_path)], capture_output=True, text=True
        ).stdout
        assert "MISMATCH" in text and "(missing 1, extra 0, duplicated 0)" in text
