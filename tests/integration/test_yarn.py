"""The mirror on the sandbox's kerberized YARN, its checkpoint on the sandbox's kerberized HDFS (one Hadoop start per
session: the ``hadoop`` fixture). spark-submit logs in with ``--principal/--keytab`` (the source side's mirror
identity, ``mirror`` to Hadoop) and Spark obtains the HDFS delegation tokens; the job is stopped hard mid-stream
and resumed from the HDFS checkpoint with nothing lost; lag and verify read that checkpoint through the Hadoop
client."""

from __future__ import annotations

import subprocess
import sys

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.run.lag import lag
from secure_mirror.sandbox.profile import yarn_profile_dict
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase, records

pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.hadoop]
CLI = [sys.executable, "-m", "secure_mirror"]


def _yarn_case(sandbox, tmp_path, deploy_mode: str) -> MirrorCase:
    data = yarn_profile_dict(sandbox, deploy_mode)
    location = f"{sandbox.hadoop().default_fs}/user/mirror/checkpoints/{tmp_path.name}"
    return MirrorCase(sandbox, tmp_path, mirror={"spark": data["mirror"]["spark"], "checkpoint_location": location},
                      hadoop=data["hadoop"])


def _run(case: MirrorCase, run_dir) -> None:
    proc = subprocess.run([*CLI, "run", str(case.profile_path), "--skip-preflight", "--until-caught-up",
                           "--run-dir", str(run_dir)], capture_output=True, text=True, timeout=600)
    job_log = (run_dir / "job.log").read_text(errors="replace")
    assert proc.returncode == EXIT_OK, proc.stderr[-2000:] + job_log[-6000:]
    return job_log


@pytest.mark.parametrize("deploy_mode", ["client", "cluster"])
def test_mirror_on_yarn_with_hdfs_checkpoint_resumes(sandbox, hadoop, tmp_path, deploy_mode):
    with _yarn_case(sandbox, tmp_path, deploy_mode) as case:
        case.create({"s": 2})
        case.produce("s", records(30, 2, "a"))
        job_log = _run(case, tmp_path / "run1")
        assert "HDFS_DELEGATION_TOKEN" in job_log or deploy_mode == "cluster", job_log[-3000:]
        assert hadoop.fs_shell("-ls", case.profile.mirror.checkpoint_location + "/commits", service="nn").strip()
        rows = lag(case.profile)
        assert rows and all(r.lag == 0 and r.offset is not None for r in rows), rows
        case.produce("s", records(20, 2, "b"))
        _run(case, tmp_path / "run2")  # resumes from the HDFS checkpoint
        result = verify(case.profile)
        assert result.ok and result.to_dict()["source_records"] == 50, result.text()
        assert sum(r.offset for r in lag(case.profile)) == 50
