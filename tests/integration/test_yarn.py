"""The mirror on the sandbox's kerberized YARN, its checkpoint on the sandbox's kerberized HDFS (one Hadoop start per
session: the ``hadoop`` fixture). spark-submit logs in with ``--principal/--keytab`` (the source side's mirror
identity, ``mirror`` to Hadoop) and Spark obtains the HDFS delegation tokens. In client mode the job is killed hard
(SIGKILL of spark-submit and the driver) mid-stream and resumed from the HDFS checkpoint with nothing lost; in
cluster mode it stops when caught up and resumes. lag, verify and the fingerprint check read that checkpoint in
place through the Hadoop client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import pytest
import yaml

from secure_mirror.errors import EXIT_BAD_INPUT, EXIT_OK
from secure_mirror.run.lag import lag
from secure_mirror.sandbox.profile import yarn_profile_dict
from secure_mirror.verify import verify
from tests.support.cluster import assert_same_records
from tests.support.mirror_case import MirrorCase, kill_when, records

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.hadoop, pytest.mark.slow]
CLI = [sys.executable, "-m", "secure_mirror"]


def test_hadoop_daemons_run_kerberized_and_refuse_a_client_without_a_ticket(sandbox, hadoop, tmp_path):
    summary = sandbox.summary()["hadoop"]
    assert summary["processes"] == dict.fromkeys(("namenode", "datanode", "resourcemanager", "nodemanager"), True)
    assert all(summary["rss_mib"][daemon] > 0 for daemon in summary["processes"]), summary
    print(f"Hadoop ready after {summary['ready_seconds']} s; resident MiB {summary['rss_mib']}")
    # the same FsShell as the superuser's, with an empty ticket cache: HDFS refuses it (no SIMPLE fallback)
    argv = [*hadoop._java("namenode")[:-1], "org.apache.hadoop.fs.FsShell", "-ls", "/"]
    env = {**hadoop._env(), "KRB5CCNAME": f"FILE:{tmp_path / 'empty.ccache'}"}
    refused = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0
    assert "Client cannot authenticate via:[TOKEN, KERBEROS]" in refused.stderr, refused.stderr[-2000:]
    assert "/user" in hadoop.fs_shell("-ls", "/")  # with the NameNode's keytab's ticket it answers


def _yarn_case(sandbox, tmp_path, deploy_mode: str) -> MirrorCase:
    data = yarn_profile_dict(sandbox, deploy_mode)
    location = f"{sandbox.hadoop().default_fs}/user/mirror/checkpoints/{uuid.uuid4().hex[:8]}-{deploy_mode}"
    return MirrorCase(
        sandbox,
        tmp_path,
        mirror={"spark": data["mirror"]["spark"], "checkpoint_location": location},
        hadoop=data["hadoop"],
    )


def _run(case: MirrorCase, run_dir, *extra: str, expect: int = EXIT_OK) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        case.run_argv(run_dir, "--until-caught-up", *extra),
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = run_dir / "job.log"
    job_log = log.read_text(errors="replace") if log.exists() else "(no job log)"
    assert proc.returncode == expect, proc.stderr[-3000:] + job_log[-6000:]
    return proc


def _committed(case: MirrorCase) -> int:
    return sum(r.offset or 0 for r in lag(case.profile))


def _kill_mid_stream(case: MirrorCase, run_dir, at_least: int) -> None:
    """Run continuously until the HDFS checkpoint holds ``at_least`` records, then SIGKILL spark-submit and the
    Python driver (their process group), as a crash would."""
    launcher = case.start_streaming(run_dir)
    ready = lambda: _committed(case) >= at_least  # noqa: E731
    kill_when(launcher, run_dir, ready, f"{at_least} records committed to the HDFS checkpoint", step=3)


def _assert_spark_connections_secured(apps: set) -> None:
    """Each container of the runs' YARN applications started Spark with authentication on (Spark's SecurityManager
    says so in its log) and none warned that I/O encryption keys travel unencrypted: the rendered
    spark.authenticate / spark.network.crypto.enabled / spark.io.encryption.enabled reached them."""
    said: dict[str, set[str]] = {}
    for app in sorted(apps):
        for stderr in app.rglob("stderr"):
            text = stderr.read_text(errors="replace")
            assert "keys will be visible on the wire" not in text, stderr
            said[f"{app.name}/{stderr.parent.name}"] = set(re.findall(r"SecurityManager: authentication (\w+)", text))
    assert len(apps) >= 2, apps  # the first run and the resumed one
    assert all(words <= {"enabled"} for words in said.values()), said
    assert all(any(name.startswith(app.name) and words for name, words in said.items()) for app in apps), said


@pytest.mark.parametrize("deploy_mode", ["client", "cluster"])
def test_mirror_on_yarn_with_hdfs_checkpoint_resumes(sandbox, hadoop, tmp_path, deploy_mode):
    logs = hadoop.base / "nm-logs"
    earlier_apps = set(os.listdir(logs)) if logs.exists() else set()
    with _yarn_case(sandbox, tmp_path, deploy_mode) as case:
        case.create({"s": 2})
        case.produce("s", records(30, 2, "a"))
        if deploy_mode == "client":
            _kill_mid_stream(case, tmp_path / "run1", 30)
        else:
            _run(case, tmp_path / "run1")
        location = case.profile.mirror.checkpoint_location
        assert hadoop.fs_shell("-ls", f"{location}/commits").strip()  # on HDFS, nothing local
        assert _committed(case) == 30

        case.produce("s", records(20, 2, "b"))
        _run(case, tmp_path / "run2")  # resumes from the HDFS checkpoint
        rows = lag(case.profile)
        assert sum(r.offset for r in rows) == 50 and all(r.lag == 0 for r in rows), rows
        result = verify(case.profile)
        assert result.ok and result.to_dict()["source_records"] == 50, result.text()
        # judged by confluent-kafka readers too, not only by our own verify
        admins = [sandbox.identity(side, "admin") for side in ("source", "target")]
        assert_same_records(*admins, case.topic("s"), case.profile.target_topic(case.topic("s")), 50)
        _assert_spark_connections_secured({logs / app for app in set(os.listdir(logs)) - earlier_apps})

        # the launcher reads the fingerprint on HDFS: other topics on this checkpoint are refused before Spark starts
        other = yaml.safe_load(case.profile_path.read_text())
        other["mirror"]["topics"]["include"] = "another\\..*"
        other_path = tmp_path / "other.yaml"
        other_path.write_text(yaml.safe_dump(other))
        refused = subprocess.run(
            [
                *CLI,
                "run",
                str(other_path),
                "--skip-preflight",
                "--until-caught-up",
                "--run-dir",
                str(tmp_path / "run3"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert refused.returncode == EXIT_BAD_INPUT, refused.stderr[-2000:]
        assert f"the checkpoint {location} belongs to a profile with other topic or rename settings" in refused.stderr
