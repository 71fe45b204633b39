"""Both ways on the sandbox: a flow src -> tgt with kept names (identity) and provenance headers, its way back
written by ``secure-mirror reverse``, each run ``--until-caught-up`` on the same topic on both clusters: every record
exists once on each side (counted by content, after the forward flow ran again over what the way back copied), the
sink skipped the records that came from its target, verify agrees on both flows, and the forward flow's heartbeat is
read back from the target's ``heartbeats`` topic in MirrorMaker 2's format, fresh for lag."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict

import pytest

from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import acls
from secure_mirror.run import heartbeats
from secure_mirror.run.lag import lag_heartbeat
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase, records
from tests.support.sink_jar import sink_conf

# in the default run: three mirror runs, A -> B, B -> A, A -> B (83 s on a quiet 2-CPU machine with the tests' faster
# Spark starts, tests/support/jvm_starts.py; about 4 min as shipped)
pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]


def _run(profile_path, run_dir) -> None:
    argv = [*CLI, "run", str(profile_path), "--skip-preflight", "--until-caught-up", "--run-dir", str(run_dir)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _values(sandbox, side: str, topic: str, expected: int) -> Counter:
    found = sandbox.admin(side, admin_ops.consume, topic, max_records=expected + 1, timeout=4.0)
    return Counter((r["key"], r["value"]) for r in found)


def _grants(profile) -> dict[str, list[dict]]:
    return {
        "source": [asdict(b) for b in acls.source_acls(profile).bindings],
        "target": [asdict(b) for b in acls.target_acls(profile).bindings],
    }


def test_two_flows_with_kept_names_copy_each_record_once_each_way(sandbox, tmp_path):
    mirror = {"rename": {"rule": "identity"}, "provenance_headers": True, "spark": {"conf": sink_conf(tmp_path)}}
    with MirrorCase(sandbox, tmp_path, mirror=mirror) as case:
        topic = case.topic("both")
        case.create({"both": 2})
        sandbox.admin("target", admin_ops.create_topics, {topic: 2})
        ours, theirs = records(30, 2, "a"), records(20, 2, "b")
        case.produce("both", ours)
        case.produce(topic, theirs, side="target")

        back_path = tmp_path / "back.yaml"
        done = subprocess.run([*CLI, "reverse", str(case.profile_path), "--out", str(back_path)], capture_output=True)
        assert done.returncode == 0, done.stderr
        back = load_profile(back_path)
        back_grants = _grants(back)  # the way back's identities: the target's on tgt (its source), src's on src
        sandbox.admin("target", admin_ops.create_acls, back_grants["source"])
        sandbox.admin("source", admin_ops.create_acls, back_grants["target"])
        try:
            _run(case.profile_path, tmp_path / "run-1")  # src -> tgt: tgt gets a's 30
            _run(back_path, tmp_path / "run-2")  # tgt -> src: src gets b's 20, never a's 30 back
            last_run = int(time.time() * 1000)
            _run(case.profile_path, tmp_path / "run-3")  # src -> tgt again: b's 20 on src came from tgt: skipped

            everything = Counter((r["key"], r["value"]) for r in ours + theirs)
            assert _values(sandbox, "source", topic, 50) == everything
            assert _values(sandbox, "target", topic, 50) == everything
            forward, way_back = verify(case.profile), verify(back)
            assert forward.ok and forward.to_dict()["source_records"] == 30, forward.text()
            assert way_back.ok and way_back.to_dict()["source_records"] == 20, way_back.text()

            beats = sandbox.admin("target", admin_ops.consume, heartbeats.TOPIC, max_records=10_000, timeout=4.0)
            mine = [
                heartbeats.decode(r["key"], r["value"])
                for r in beats
                if heartbeats.encode_key("src", "tgt") == r["key"]
            ]
            assert mine and {(b.source_alias, b.target_alias) for b in mine} == {("src", "tgt")}
            state = lag_heartbeat(case.profile)  # lag finds the heartbeat the last run wrote (its age: the test's)
            assert state is not None and state.newest_ms is not None and state.newest_ms >= last_run, state.text()
            assert state.stale == (state.now_ms - state.newest_ms > 60_000)
        finally:
            sandbox.admin("target", admin_ops.delete_acls, back_grants["source"])
            sandbox.admin("source", admin_ops.delete_acls, back_grants["target"])
