"""Both ways on the sandbox (issue 29 part 5): a flow src -> tgt with kept names (identity) and provenance headers,
and its way back written by ``secure-mirror reverse``, the two jobs running at once while records are produced on
both clusters into the same topic for a minute (seeded): every record exists once on each side, counted by content;
verify agrees on both flows; and the forward flow's heartbeat is read back from the target's ``heartbeats`` topic in
MirrorMaker 2's format, fresh for lag."""

from __future__ import annotations

import signal
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
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import caught_up, wait_for
from secure_mirror.verify import verify
from tests.support.cluster import consume_to_end
from tests.support.mirror_case import MirrorCase, records
from tests.support.seeds import seeded

# in the default run: two jobs for a minute of produce and their catching up (tests/support/jvm_starts.py makes their
# starts fast)
pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]
MIX_SECONDS = 60  # produce on both sides while both jobs run


def _start(profile_path, run_dir, log):
    argv = [*CLI, "run", str(profile_path), "--skip-preflight", "--trigger-interval", "1 second"]
    return subprocess.Popen([*argv, "--run-dir", str(run_dir)], stdout=log, stderr=subprocess.STDOUT)


def _stop(job, log_path) -> None:
    job.send_signal(signal.SIGTERM)
    job.wait(timeout=120)
    assert job.returncode == 0, log_path.read_text(errors="replace")[-3000:]


def _values(sandbox, side: str, topic: str, expected: int) -> Counter:
    found = sandbox.admin(side, consume_to_end, topic)  # to the end: a duplicate is seen
    assert len(found) >= expected, (topic, len(found))
    return Counter((r["key"], r["value"]) for r in found)


def _grants(profile) -> dict[str, list[dict]]:
    return {
        "source": [asdict(b) for b in acls.source_acls(profile).bindings],
        "target": [asdict(b) for b in acls.target_acls(profile).bindings],
    }


# CI time: slow (CI overran 90 min at 1d870a0). Two jobs a way; CI keeps the both-ways profile's unit cases
# (tests/unit/profile/test_both_ways.py).
@pytest.mark.slow
def test_two_flows_with_kept_names_copy_each_record_once_each_way(sandbox, tmp_path):
    # one core each: the two jobs, the producers and both clusters share the machine
    spark = {"master": "local[1]", "conf": sink_conf(tmp_path)}
    mirror = {"rename": {"rule": "identity"}, "provenance_headers": True, "spark": spark}
    rng = seeded("both ways: records produced on each side")
    with MirrorCase(sandbox, tmp_path, mirror=mirror) as case:
        topic = case.topic("both")
        case.create({"both": 2})
        sandbox.admin("target", admin_ops.create_topics, {topic: 2})
        produced = {"source": records(30, 2, "a"), "target": records(20, 2, "b")}  # before the jobs start
        case.produce("both", produced["source"])
        case.produce(topic, produced["target"], side="target")

        back_path = tmp_path / "back.yaml"
        done = subprocess.run([*CLI, "reverse", str(case.profile_path), "--out", str(back_path)], capture_output=True)
        assert done.returncode == 0, done.stderr
        back = load_profile(back_path)
        back_grants = _grants(back)  # the way back's identities: the target's on tgt (its source), src's on src
        sandbox.admin("target", admin_ops.create_acls, back_grants["source"])
        sandbox.admin("source", admin_ops.create_acls, back_grants["target"])
        logs = {name: tmp_path / f"{name}.log" for name in ("forward", "back")}
        with logs["forward"].open("w") as forward_log, logs["back"].open("w") as back_log:
            jobs = {
                "forward": _start(case.profile_path, tmp_path / "run-forward", forward_log),
                "back": _start(back_path, tmp_path / "run-back", back_log),
            }
            try:
                # a minute of mixed produce: bursts of 1 to 15 records on one side or the other, now and then both
                deadline, burst = time.monotonic() + MIX_SECONDS, 0
                while time.monotonic() < deadline:
                    for side in rng.sample(["source", "target"], rng.choice([1, 1, 2])):
                        batch = records(rng.randint(1, 15), 2, f"{side[0]}{burst}")
                        case.produce(topic, batch, side="target") if side == "target" else case.produce("both", batch)
                        produced[side] += batch
                        burst += 1
                    time.sleep(rng.uniform(0.1, 0.8))
                wait_for(
                    lambda: caught_up(case.profile, {topic}) and caught_up(back, {topic}), 180, "both flows to catch up"
                )
                alive_at = int(time.time() * 1000)
            finally:
                for name, job in jobs.items():
                    _stop(job, logs[name])
        try:
            everything = Counter((r["key"], r["value"]) for r in produced["source"] + produced["target"])
            total = sum(everything.values())
            print(
                f"\nboth ways: {len(produced['source'])} records produced on src and {len(produced['target'])} on tgt "
                f"over {MIX_SECONDS} s with both jobs running"
            )
            assert _values(sandbox, "source", topic, total) == everything
            assert _values(sandbox, "target", topic, total) == everything
            forward, way_back = verify(case.profile), verify(back)
            assert forward.ok and forward.to_dict()["source_records"] == len(produced["source"]), forward.text()
            assert way_back.ok and way_back.to_dict()["source_records"] == len(produced["target"]), way_back.text()

            beats = sandbox.admin("target", admin_ops.consume, heartbeats.TOPIC, max_records=10_000, timeout=4.0)
            mine = [
                heartbeats.decode(r["key"], r["value"])
                for r in beats
                if heartbeats.encode_key("src", "tgt") == r["key"]
            ]
            assert mine and {(b.source_alias, b.target_alias) for b in mine} == {("src", "tgt")}
            state = lag_heartbeat(
                case.profile
            )  # the newest heartbeat: written while the jobs ran (its age: the test's)
            assert state is not None and state.newest_ms is not None, state
            assert state.newest_ms >= alive_at - 5_000, (state.text(), alive_at)
            assert state.stale == (state.now_ms - state.newest_ms > 60_000)
        finally:
            sandbox.admin("target", admin_ops.delete_acls, back_grants["source"])
            sandbox.admin("source", admin_ops.delete_acls, back_grants["target"])
