"""The mirror job on a real multi-process Spark deployment: a standalone master and two workers (each a JVM of its
own), the driver in client mode here, executors in the workers. The executors get the keytabs and krb5.conf
through ``--files`` exactly as the rendered spark-submit.sh ships them, under the distinct names the Kafka options
refer to; mirroring and verify pass. The cluster authenticates and encrypts Spark's own connections with its
operators' secret (the application reads it from the cluster's spark-defaults.conf); on a cluster that does not,
the job refuses before any task."""

from __future__ import annotations

import re
import subprocess

import pytest

from secure_mirror.errors import EXIT_OK, EXIT_REFUSED
from secure_mirror.render import spark as spark_render
from secure_mirror.sandbox.spark_standalone import SparkStandalone
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase, records

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.slow]
SHIPPED = ("source-mirror.keytab", "target-mirror.keytab", "krb5.conf")


def _spark_on(cluster: SparkStandalone, **conf) -> dict:
    """mirror.spark for ``cluster``: the driver on loopback, executors of one core and 512m."""
    base = {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.memory": "512m",
        "spark.executor.cores": 1,
    }
    return {"master": cluster.master_url, "conf": base | conf}


def _run_until_caught_up(case: MirrorCase, run_dir, cluster: SparkStandalone):
    """``secure-mirror run --until-caught-up`` submitted as the cluster's machines submit (its SPARK_CONF_DIR);
    the finished process and the job's log."""
    proc = subprocess.run(
        case.run_argv(run_dir, "--until-caught-up"),
        capture_output=True,
        text=True,
        timeout=600,
        env=cluster.client_env(),
    )
    return proc, (run_dir / "job.log").read_text(errors="replace")


def test_standalone_master_and_two_workers_mirror_with_shipped_keytabs(sandbox, tmp_path):
    with SparkStandalone(tmp_path / "spark", workers=2, cores=1, memory="1g") as cluster:
        # both executors are up before the first batch, so each gets Kafka partitions
        spark = _spark_on(cluster, **{"spark.scheduler.minRegisteredResourcesRatio": 1.0})
        with MirrorCase(sandbox, tmp_path, mirror={"spark": spark}) as case:
            # the executors' options name the shipped copies, never the keytab files of this machine
            source_jaas = spark_render.source_options(case.profile)["kafka.sasl.jaas.config"]
            sink_jaas = spark_render.sink_options(case.profile)["kafka.sasl.jaas.config"]
            assert 'keyTab="source-mirror.keytab"' in source_jaas and 'keyTab="target-mirror.keytab"' in sink_jaas
            assert str(sandbox.keytab("source", "mirror")) not in source_jaas + sink_jaas

            case.create({"s": 4})
            case.produce("s", records(200, 4, "s"))
            proc, job_log = _run_until_caught_up(case, tmp_path / "run", cluster)
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
            # every executor, and the driver, authenticated Spark's connections and encrypted them
            for folder in executors:
                said = set(re.findall(r"SecurityManager: authentication (\w+)", (folder / "stderr").read_text()))
                assert said == {"enabled"}, folder
            assert "authentication enabled" in job_log and "visible on the wire" not in job_log + logs
            # the cluster's secret reached the processes through spark-defaults.conf, not an argument or a log
            assert "Spark Executor Command" in logs
            daemon_logs = "".join(p.read_text(errors="replace") for p in (cluster.base / "logs").glob("*"))
            for text in (logs, job_log, proc.stdout, proc.stderr, daemon_logs):
                assert cluster.secret not in text
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
        spark = _spark_on(cluster)
        with MirrorCase(sandbox, tmp_path, mirror={"spark": spark}, shared_keytab=shared) as case:
            case.create({"s": 2})
            case.produce("s", records(50, 2, "s"))
            proc, job_log = _run_until_caught_up(case, tmp_path / "run", cluster)
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


def test_a_cluster_without_authentication_and_encryption_is_refused_before_any_task(sandbox, tmp_path):
    """A standalone cluster that leaves Spark's own connections open: the job refuses (exit 5, one sentence naming
    the settings and the profile's way out) before it creates a Spark context, so no executor starts (an executor
    fetches the shipped keytabs at its start, before any task: the CI pre-run of a check made on the running context
    found one fetched on a loaded machine)."""
    with SparkStandalone(tmp_path / "spark", workers=1, cores=1, memory="1g", secure=False) as cluster:
        spark = _spark_on(cluster)
        with MirrorCase(sandbox, tmp_path, mirror={"spark": spark}) as case:
            case.create({"s": 1})
            case.produce("s", records(10, 1, "s"))
            proc, job_log = _run_until_caught_up(case, tmp_path / "run", cluster)
            assert proc.returncode == EXIT_REFUSED, proc.stderr[-2000:] + job_log[-4000:]
            said = proc.stdout + proc.stderr
            assert "spark.authenticate=true and spark.network.crypto.enabled=true missing" in said, said
            assert "mirror.spark.require_encrypted_cluster" in said and "Traceback" not in said, said
            status = cluster.status()  # refused before a Spark context existed: the master never saw the job
            assert not status["activeapps"] + status["completedapps"], status
            for folder in cluster.executor_dirs():
                assert not (folder / "source-mirror.keytab").exists(), sorted(p.name for p in folder.iterdir())
                assert "Running task" not in (folder / "stderr").read_text(errors="replace")
