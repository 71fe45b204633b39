"""A machine whose confluent-kafka is missing, or is PyPI's wheel (no GSSAPI provider in its librdkafka), gets exit 4
and the fix from preflight, run, lag and verify before anything is asked of a server (issue 30, part 3), never "report
this". The wheel is the real one from PyPI, for the version installed here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.output_schemas import assert_valid
from tests.support.profiles import password, profile_data, write_profile

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "secure_mirror"]


def _run(args: list[str], python_path: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{python_path}{os.pathsep}{REPO}", "HOME": str(tmp)}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, env=env, cwd=tmp)


@pytest.fixture(scope="module")
def pypi_wheel(tmp_path_factory) -> Path:
    """PyPI's confluent-kafka wheel of the installed version, unpacked: its librdkafka has no GSSAPI."""
    import confluent_kafka

    folder = tmp_path_factory.mktemp("pypi-confluent-kafka")
    version = confluent_kafka.version()[0]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(folder),
         f"confluent-kafka=={version}"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    [wheel] = folder.glob("confluent_kafka-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder / "site")
    return folder / "site"


@pytest.fixture()
def no_client(tmp_path) -> Path:
    """A confluent_kafka package that cannot be imported, shadowing the installed one."""
    package = tmp_path / "shadow" / "confluent_kafka"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise ImportError('No module named confluent_kafka (shadowed by the test)')\n"
    )
    return tmp_path / "shadow"


@pytest.mark.parametrize("command", ["preflight", "run", "lag", "verify"])
def test_a_missing_client_is_exit_4_with_the_fix(command, no_client, tmp_path):
    profile = write_profile(tmp_path, profile_data(tmp_path))
    result = _run([command, str(profile)], no_client, tmp_path)
    assert result.returncode == 4, result.stderr
    assert f"{command} needs confluent-kafka with a librdkafka that can log in: confluent-kafka cannot be imported" in (
        result.stderr
    )
    assert "scripts/setup" in result.stderr and "Traceback" not in result.stderr


def test_pypis_wheel_without_gssapi_is_exit_4_naming_it(pypi_wheel, tmp_path):
    result = _run(["preflight", str(write_profile(tmp_path, profile_data(tmp_path)))], pypi_wheel, tmp_path)
    assert result.returncode == 4, result.stderr
    assert "its librdkafka cannot use SASL GSSAPI" in result.stderr
    assert "No provider for SASL mechanism GSSAPI" in result.stderr
    assert "pip install --no-binary confluent-kafka confluent-kafka" in result.stderr


def test_pypis_wheel_serves_a_scram_profile(pypi_wheel, tmp_path):
    """The same wheel passes the check for SCRAM on both sides (the wheel has SASL_SCRAM): asked in its process."""
    data = profile_data(tmp_path, password(tmp_path, "source", "SCRAM-SHA-512"), password(tmp_path, "target", "PLAIN"))
    write_profile(tmp_path, data)
    code = (
        "from secure_mirror.kafka import client_support as c; import confluent_kafka as k; "
        "c.require(['SCRAM-SHA-512', 'PLAIN', None], 'lag'); print(k.__file__)"
    )
    env = {**os.environ, "PYTHONPATH": f"{pypi_wheel}{os.pathsep}{REPO}"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(str(pypi_wheel))


def test_doctor_names_what_pypis_wheel_lacks(pypi_wheel, tmp_path):
    result = _run(["doctor"], pypi_wheel, tmp_path)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "MISS SASL GSSAPI: its librdkafka cannot use SASL GSSAPI" in result.stdout
    assert "ok   SASL SCRAM-SHA-512: provided by librdkafka" in result.stdout


def test_doctor_is_ready_here_and_names_missing_jars(tmp_path):
    ready = _run(["doctor", "--json"], tmp_path, tmp_path)
    assert ready.returncode == 0, ready.stdout + ready.stderr
    assert_valid("doctor", ready.stdout)
    [cache] = [i for i in json.loads(ready.stdout)["items"] if i["name"] == "the driver's class-data archive"]
    assert cache["found"].startswith(f"none yet in {tmp_path / '.cache' / 'secure-mirror' / 'jvm'}"), cache
    env_less = subprocess.run(
        [*CLI, "doctor"], capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "SECURE_MIRROR_DEPS": str(tmp_path / "none")},
    )  # fmt: skip
    assert env_less.returncode == 4
    assert f"MISS the mirror's sink: not in {tmp_path / 'none' / 'spark-jars'}" in env_less.stdout
