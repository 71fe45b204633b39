"""Installed like a Python tool, offline (issue 30): ``secure-mirror bundle`` builds the wheel from this checkout (its
Java compiled into it) and collects its Python dependencies and the connector jars; a fresh virtualenv outside the
repository installs from that folder with the package index switched off, confluent-kafka built from the bundle's
source against a librdkafka with GSSAPI (the repository's, as scripts/setup builds it; the bundle's README says to use
the system's). From a folder outside the repository, with nothing of the checkout on the paths, ``doctor``,
``preflight``, ``run --until-caught-up`` and ``verify`` then work against the sandbox, the job loading the bundle's
jars (``mirror.spark.jars.local_dir``) and the wheel's own sink."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from secure_mirror import paths
from secure_mirror.commands.bundle import confluent_kafka_version
from secure_mirror.sandbox.profile import profile_dict
from tests.support.cluster import assert_same_records
from tests.support.mirror_case import MirrorCase, records

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
CONFLUENT_KAFKA = confluent_kafka_version()


def _check(argv: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{' '.join(argv)}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """The bundle, and a virtualenv outside the repository installed from it with --no-index."""
    folder = tmp_path_factory.mktemp("wheel-install")
    assert REPO not in folder.parents
    bundle, venv = folder / "bundle", folder / "venv"
    _check([str(REPO / ".venv" / "bin" / "secure-mirror"), "bundle", "--out", str(bundle)], 900, cwd=folder)
    _check([sys.executable, "-m", "venv", str(venv)], 120)
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--find-links", str(bundle / "wheels")]
    kept = sorted((paths.deps_dir() / "wheels").glob(f"confluent_kafka-{CONFLUENT_KAFKA}-*.whl"))
    if kept:  # scripts/setup's own build (GSSAPI), kept beside its librdkafka
        _check([*pip, "--no-deps", str(kept[0])], 120)
    else:  # the README's step, against the librdkafka scripts/setup built
        rdk = paths.librdkafka_dir()
        build_env = {**os.environ, "C_INCLUDE_PATH": f"{rdk}/include", "LIBRARY_PATH": f"{rdk}/lib",
                     "LDFLAGS": f"-Wl,-rpath,{rdk}/lib"}  # fmt: skip
        _check([*pip, "setuptools", "wheel"], 120)
        no_binary = ["--no-build-isolation", "--no-binary", "confluent-kafka", f"confluent-kafka=={CONFLUENT_KAFKA}"]
        _check([*pip, *no_binary], 600, env=build_env)
    _check([*pip, "secure-mirror"], 600)
    return {"bundle": bundle, "venv": venv, "folder": folder}


def _outside(
    installed: dict[str, Path], *args: str, timeout: float = 300, java_home_too: bool = False
) -> subprocess.CompletedProcess[str]:
    """The installed command, from a folder outside the repository, nothing of the checkout on any path.
    ``java_home_too``: spark-submit's JVM takes the same home (``user.home``, where Spark's Ivy keeps its cache and
    finds the local Maven repository; Java reads it from the account, not from HOME)."""
    home = installed["folder"] / "home"
    home.mkdir(exist_ok=True)
    path = ":".join(p for p in os.environ["PATH"].split(":") if not p.startswith(str(REPO)))
    env = {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8"}
    if java_home_too:
        env["SPARK_SUBMIT_OPTS"] = f"-Duser.home={home}"
    env.update({k: os.environ[k] for k in ("JAVA_HOME", "TMPDIR") if k in os.environ})
    argv = [str(installed["venv"] / "bin" / "secure-mirror"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=installed["folder"])


def test_the_bundle_holds_the_wheel_its_dependencies_the_jars_and_the_steps(installed):
    bundle = installed["bundle"]
    wheels = {p.name.split("-")[0].lower() for p in (bundle / "wheels").iterdir()}
    assert {"secure_mirror", "pyspark", "confluent_kafka", "gssapi", "pydantic", "setuptools", "wheel"} <= wheels
    assert (bundle / "wheels" / f"confluent_kafka-{CONFLUENT_KAFKA}.tar.gz").is_file()
    jars = sorted(p.name for p in (bundle / "jars").iterdir())
    assert [j.split("-")[0] for j in jars] == ["commons", "kafka", "spark", "spark"] and paths.SINK_JAR not in jars
    readme = (bundle / "README.md").read_text()
    assert "pip install --no-index --find-links $B/wheels secure-mirror" in readme
    assert "--no-binary confluent-kafka confluent-kafka==2.8.0" in readme


def test_the_installed_package_carries_its_jars_and_doctor_finds_everything(installed):
    [site] = (installed["venv"] / "lib").glob("python3.*/site-packages")
    jars = site / "secure_mirror" / "_data" / "jars"
    assert sorted(p.name for p in jars.iterdir()) == [paths.SINK_JAR, paths.TOOLS_JAR]
    assert not (site / "jvm").exists() and not (site / ".deps").exists()
    doctor = _outside(installed, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"ok   the mirror's sink: {jars / paths.SINK_JAR}" in doctor.stdout
    assert "ok   SASL GSSAPI: provided by librdkafka" in doctor.stdout
    assert "ok   Spark's Kafka connector: resolved by Spark when the job starts (spark.jars.packages" in doctor.stdout


def test_preflight_and_a_mirror_run_from_the_installed_package(installed, sandbox):
    folder = installed["folder"] / "mirror"
    folder.mkdir()
    spark = {**profile_dict(sandbox)["mirror"]["spark"], "jars": {"local_dir": str(installed["bundle"] / "jars")}}
    with MirrorCase(sandbox, folder, mirror={"spark": spark}) as case:
        case.create({"a": 3})
        case.produce("a", records(40, 3, "a"))
        profile = str(case.profile_path)
        assert yaml.safe_load(case.profile_path.read_text())["mirror"]["spark"]["jars"]["local_dir"]
        admin = ",".join(
            f"{side}.principal={sandbox.sides[side].admin_principal},{side}.keytab={sandbox.keytab(side, 'admin')}"
            for side in ("source", "target")
        )  # the audit proves WRITE on the target topic still to create
        preflight = _outside(installed, "preflight", profile, "--as-admin", admin)
        assert preflight.returncode == 0, preflight.stdout + preflight.stderr
        for side in ("source", "target"):  # the wheel's compiled probe on the bundle's kafka-clients
            assert f"pass       {side}.java.client: Kafka's Java client" in preflight.stdout
        rendered = _outside(installed, "render", profile, "--out", str(folder / "rendered"))
        assert rendered.returncode == 0, rendered.stdout + rendered.stderr
        submit = (folder / "rendered" / "spark" / "spark-submit.sh").read_text()
        assert str(installed["bundle"] / "jars" / "kafka-clients-3.9.0.jar") in submit
        assert f"/site-packages/secure_mirror/_data/jars/{paths.SINK_JAR}" in submit
        assert "spark.jars.packages" not in submit and str(REPO) not in submit
        run = _outside(installed, "run", profile, "--skip-preflight", "--until-caught-up", "--run-dir",
                       str(folder / "run"), timeout=600)  # fmt: skip
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        verify = _outside(installed, "verify", profile)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert "verify: match: 40 source records, 40 target records" in verify.stdout  # every record arrived
        assert f"OK       {case.topic('a')}[0] -> src.{case.topic('a')}" in verify.stdout
        # judged by confluent-kafka readers too, not only by the installed package's own verify
        admins = [sandbox.identity(side, "admin") for side in ("source", "target")]
        assert_same_records(*admins, case.topic("a"), case.profile.target_topic(case.topic("a")), 40)
    shutil.rmtree(folder / "rendered", ignore_errors=True)  # it holds the options files


# What Maven leaves in ~/.m2 after resolving a build that needed a dependency's pom alone: Spark's default resolvers
# ask the local Maven repository first and fail there ("download failed: org.slf4j#slf4j-api;2.0.16!slf4j-api.jar")
# instead of asking the next repository; the Ivy settings render writes never ask it.
POM_ONLY = ("org/slf4j/slf4j-api/2.0.16/slf4j-api-2.0.16.pom", "org.slf4j", "slf4j-api", "2.0.16")


def test_without_local_jars_the_installed_job_resolves_the_connector_with_spark_jars_packages(installed, sandbox):
    """An installed package without local jars: ``spark-submit`` names the pinned Spark's Kafka connector in
    ``spark.jars.packages`` and the Ivy settings render wrote (Maven Central, as no repository is named), and Spark
    resolves it when the job starts, although the user's ``~/.m2`` holds a pom without its jar; the job mirrors."""
    folder = installed["folder"] / "packages"
    folder.mkdir()
    path, group, artifact, version = POM_ONLY
    pom = installed["folder"] / "home" / ".m2" / "repository" / path
    pom.parent.mkdir(parents=True, exist_ok=True)
    pom.write_text(
        f"<project><modelVersion>4.0.0</modelVersion><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version></project>\n"
    )
    with MirrorCase(sandbox, folder, mirror={"spark": profile_dict(sandbox)["mirror"]["spark"]}) as case:
        case.create({"p": 2})
        case.produce("p", records(10, 2, "p"))
        profile = str(case.profile_path)
        rendered = _outside(installed, "render", profile, "--out", str(folder / "rendered"))
        assert rendered.returncode == 0, rendered.stdout + rendered.stderr
        submit = (folder / "rendered" / "spark" / "spark-submit.sh").read_text()
        assert f"spark.jars.packages={paths.CONNECTOR_PACKAGE}" in submit and str(REPO) not in submit, submit
        assert f"spark.jars.ivySettings={folder / 'rendered' / 'spark' / 'ivysettings.xml'}" in submit, submit
        run = _outside(installed, "run", profile, "--skip-preflight", "--until-caught-up", "--run-dir",
                       str(folder / "run"), timeout=900, java_home_too=True)  # fmt: skip
        log = folder / "run" / "job.log"
        job_log = log.read_text(errors="replace") if log.exists() else ""
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:] + job_log[-3000:]
        assert f"Ivy Default Cache set to: {installed['folder'] / 'home'}" in job_log, job_log[
            :3000
        ]  # this home, not the account's
        # Ivy names the rendered chain's resolver (its chain's name when the cache answered)
        found = f"found {group}#{artifact};{version} in "
        assert f"{found}repository-0" in job_log or f"{found}secure-mirror" in job_log, job_log[:4000]
        assert "local-m2-cache" not in job_log, job_log[:4000]
        verify = _outside(installed, "verify", profile)
        assert verify.returncode == 0 and "verify: match: 10 source records, 10 target records" in verify.stdout, (
            verify.stdout + verify.stderr
        )
        admins = [sandbox.identity(side, "admin") for side in ("source", "target")]
        assert_same_records(*admins, case.topic("p"), case.profile.target_topic(case.topic("p")), 10)
    shutil.rmtree(folder / "rendered", ignore_errors=True)
