"""secure-mirror bundle's refusals and its README (the bundle itself is built and installed offline in
tests/integration/test_wheel_install.py)."""

from __future__ import annotations

import os
import subprocess

import pytest

from secure_mirror import paths
from secure_mirror.cli import main
from secure_mirror.commands import bundle


def test_an_existing_non_empty_folder_is_refused_as_bad_input(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    assert main(["bundle", "--out", str(tmp_path / "out")]) == 2
    assert f"--out {tmp_path / 'out'} exists and is not an empty folder; name a new one" in capsys.readouterr().err
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


def test_outside_a_checkout_it_says_where_to_run_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    assert main(["bundle", "--out", str(tmp_path / "out")]) == 4
    assert "bundle builds secure-mirror's wheel from a checkout" in capsys.readouterr().err


def test_a_checkout_without_the_connector_jars_is_told_to_run_setup(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SECURE_MIRROR_DEPS", str(tmp_path / "deps"))
    assert main(["bundle", "--out", str(tmp_path / "out")]) == 4
    err = capsys.readouterr().err
    assert f"Spark's Kafka connector jars are missing from {tmp_path / 'deps'}/spark-jars; run scripts/setup" in err


def test_confluent_kafka_is_pinned_in_pyproject_alone():
    """pyproject.toml is its one home: bundle reads it there, and scripts/setup's line reads it the same way."""
    [line] = [
        line
        for line in (paths.REPO_ROOT / "scripts" / "setup").read_text().splitlines()
        if "CONFLUENT_KAFKA_VERSION=" in line
    ]
    read = subprocess.run(
        ["bash", "-c", f'{line}; printf %s "$CONFLUENT_KAFKA_VERSION"'],
        env={"ROOT": str(paths.REPO_ROOT), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    )
    version = bundle.confluent_kafka_version()
    assert read.stdout == version and version.count(".") == 2
    assert version not in line and version not in (paths.REPO_ROOT / "secure_mirror/commands/bundle.py").read_text()


@pytest.mark.parametrize(
    "step",
    [
        "pip install --no-index --find-links $B/wheels setuptools wheel",
        "--no-build-isolation \\\n  --no-binary confluent-kafka confluent-kafka==2.8.0",
        "/opt/secure-mirror/bin/pip install --no-index --find-links $B/wheels secure-mirror",
        "      local_dir: /path/to/this/bundle/jars",
        "(`spark.jars.packages`), from Maven Central or from `mirror.spark.jars.repositories`",
    ],
)
def test_the_readme_gives_the_offline_steps(step):
    text = bundle.readme("secure_mirror-0.1.0-py3-none-any.whl", ["kafka-clients-3.9.0.jar"])
    assert step in text
    assert "- `kafka-clients-3.9.0.jar`" in text and paths.CONNECTOR_PACKAGE in text
