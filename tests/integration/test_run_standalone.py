"""The mirror job on a real multi-process Spark deployment: a standalone master and two workers (each a JVM of its
own), the driver in client mode here, executors in the workers. The executors get the keytabs and krb5.conf
through ``--files`` exactly as the rendered spark-submit.sh ships them, under the distinct names the Kafka options
refer to; mirroring and verify pass."""

from __future__ import annotations

import subprocess
import sys

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.render import spark as spark_render
from secure_mirror.sandbox.spark_standalone import SparkStandalone
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase, records

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
CLI = [sys.executable, "-m", "secure_mirror"]
SHIPPED = ("source-mirror.keytab", "target-mirror.keytab", "krb5.conf")


def test_standalone_master_and_two_workers_mirror_with_shipped_keytabs(sandbox, tmp_path):
    with SparkStandalone(tmp_path / "spark", workers=2, cores=1, memory="1g") as cluster:
        spark = {
            "master": cluster.master_url,
            "conf": {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.executor.memory": "512m",
                "spark.executor.cores": 1,
                # both executors are up before the first batch, so each gets Kafka partitions
                "spark.scheduler.minRegisteredResourcesRatio": 1.0,
            },
        }
        with MirrorCase(sandbox, tmp_path, mirror={"spark": spark}) as case:
            # the executors' options name the shipped copies, never the keytab files of this machine
            source_jaas = spark_render.source_options(case.profile)["kafka.sasl.jaas.config"]
            sink_jaas = spark_render.sink_options(case.profile)["kafka.sasl.jaas.config"]
            assert 'keyTab="source-mirror.keytab"' in source_jaas and 'keyTab="target-mirror.keytab"' in sink_jaas
            assert str(sandbox.keytab("source", "mirror")) not in source_jaas + sink_jaas

            case.create({"s": 4})
            case.produce("s", records(200, 4, "s"))
            proc = subprocess.run(
                [
                    *CLI,
                    "run",
                    str(case.profile_path),
                    "--skip-preflight",
                    "--until-caught-up",
                    "--run-dir",
                    str(tmp_path / "run"),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            job_log = (tmp_path / "run" / "job.log").read_text(errors="replace")
            assert proc.returncode == EXIT_OK, proc.stderr[-2000:] + job_log[-4000:]
            result = verify(case.profile)
            assert result.ok and result.to_dict()["source_records"] == 200, result.text()

            # the master ran our application on its workers ...
            apps = [
                a
                for a in cluster.status()["completedapps"] + cluster.status()["activeapps"]
                if a["name"] == "secure-mirror"
            ]
            assert len(apps) == 1, cluster.status()
            app_id = apps[0]["id"]
            executors = cluster.executor_dirs(app_id)
            workers_used = {d.parent.parent for d in executors}
            assert len(workers_used) == 2, f"executors of {app_id}: {executors}"
            # ... whose executors fetched the shipped files into their working folders under the shipped names
            # (private to this user) and, with the options' relative keytab names, logged in to both clusters
            for folder in executors:
                assert all((folder / name).is_file() for name in SHIPPED), sorted(p.name for p in folder.iterdir())
                assert (folder / "source-mirror.keytab").stat().st_mode & 0o044 == 0  # Spark adds a+x
            logs = "".join((d / "stderr").read_text(errors="replace") for d in executors)
            assert "Running task" in logs
            for side in ("source", "target"):
                assert f"[Principal={sandbox.sides[side].mirror_principal}]: TGT refresh thread started" in logs
                assert str(sandbox.keytab(side, "mirror")) not in logs


def test_one_keytab_for_both_sides_ships_under_both_names_to_standalone_executors(sandbox, tmp_path):
    """Both principals' keys in one keytab file (MIT's format: one header, then the entries of both), used by
    both sides: the executors get it as source-mirror.keytab and as target-mirror.keytab and log in to both."""
    shared = tmp_path / "both.keytab"
    shared.touch(mode=0o600)
    shared.write_bytes(
        sandbox.keytab("source", "mirror").read_bytes() + sandbox.keytab("target", "mirror").read_bytes()[2:]
    )
    with SparkStandalone(tmp_path / "spark", workers=1, cores=1, memory="1g") as cluster:
        spark = {
            "master": cluster.master_url,
            "conf": {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.executor.memory": "512m",
                "spark.executor.cores": 1,
            },
        }
        with MirrorCase(sandbox, tmp_path, mirror={"spark": spark}, shared_keytab=shared) as case:
            case.create({"s": 2})
            case.produce("s", records(50, 2, "s"))
            proc = subprocess.run(
                [
                    *CLI,
                    "run",
                    str(case.profile_path),
                    "--skip-preflight",
                    "--until-caught-up",
                    "--run-dir",
                    str(tmp_path / "run"),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            job_log = (tmp_path / "run" / "job.log").read_text(errors="replace")
            assert proc.returncode == EXIT_OK, proc.stderr[-2000:] + job_log[-4000:]
            result = verify(case.profile)
            assert result.ok and result.to_dict()["source_records"] == 50, result.text()
            app_id = [
                a
                for a in cluster.status()["completedapps"] + cluster.status()["activeapps"]
                if a["name"] == "secure-mirror"
            ][0]["id"]
            for folder in cluster.executor_dirs(app_id):
                for name in ("source-mirror.keytab", "target-mirror.keytab"):
                    assert (folder / name).read_bytes() == shared.read_bytes(), name
