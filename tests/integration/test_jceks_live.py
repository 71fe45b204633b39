"""A Hadoop credential store, live: the sandbox's ``secrets/mirror.jceks`` (made with ``hadoop credential create``,
sandbox/credstore.py) holds the target's SCRAM-SHA-512 password, and ``profile-jceks.yaml`` names it
``jceks://file/...#target-scram``. Pre-flight logs in to the target with the password read through Hadoop's
CredentialProviderFactory; Kafka's own TopicCommand logs in with the rendered client properties, which hold no
password, only ``${jceks-XXXXXXXX:target-scram}``, resolved by our config provider (jvm/sink securemirror.config); and
the job, run with references, reads the same store in its JVM and mirrors every record."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import PASS, run_preflight
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.render.providers import HADOOP_CREDENTIALS, REFERENCES, store_provider
from secure_mirror.run.launcher import run_mirror
from secure_mirror.sandbox import credstore
from secure_mirror.verify import verify
from tests.support.mirror_case import MirrorCase, records

pytestmark = pytest.mark.sandbox
COUNT = 60


@pytest.fixture(scope="module")
def jceks_profile(sandbox):
    path = sandbox.base / "profile-jceks.yaml"
    if not path.exists():
        pytest.skip("this sandbox was started before it had a credential store; start a new one")
    return load_profile(path)


def test_the_profile_names_the_store_and_preflight_logs_in_with_its_value(jceks_profile, sandbox):
    assert str(jceks_profile.target.sasl.password) == (
        f"{credstore.provider(sandbox.credential_store)}#{credstore.TARGET_ALIAS}"
    )
    check = run_preflight(jceks_profile).get("target.kafka.connect")
    assert check.status == PASS and "User:mirror" in check.finding, check.finding


def test_kafkas_topic_command_reads_the_password_from_the_store(jceks_profile, sandbox, tmp_path):
    out = tmp_path / "out"
    render_all(jceks_profile, out, secrets=REFERENCES)
    password = sandbox.scram_password_file("target").read_text()
    properties = out / "target" / "client.properties"
    text = properties.read_text()
    name = store_provider(credstore.provider(sandbox.credential_store)).name
    assert password not in text and "${" + name + ":" + credstore.TARGET_ALIAS + "}" in text
    assert f"config.providers.{name}.param.path={credstore.provider(sandbox.credential_store)}" in text
    assert f"export CLASSPATH={paths.credential_provider_classpath()}" in text  # the header says what to add
    ran = _topic_list(sandbox, properties)
    assert ran.returncode == 0, ran.stderr[-3000:]
    wrong = tmp_path / "wrong-alias.properties"
    wrong.write_text(text.replace(f"${{{name}:target-scram}}", f"${{{name}:target-scram-old}}"))
    refused = _topic_list(sandbox, wrong)
    assert (
        refused.returncode != 0
        and (f"the credential store {credstore.provider(sandbox.credential_store)} has no alias target-scram-old")
        in refused.stdout + refused.stderr
    ), refused.stderr[-3000:]


def _topic_list(sandbox, properties: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [paths.java_executable(), "-Xmx256m", f"-Dorg.apache.kafka.automatic.config.providers={HADOOP_CREDENTIALS}",
         "-cp", f"{paths.credential_provider_classpath()}:{paths.kafka_classpath()}", "org.apache.kafka.tools.TopicCommand",
         "--bootstrap-server", sandbox.sides["target"].bootstrap, "--command-config", str(properties), "--list"],
        capture_output=True, text=True, timeout=180, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip


@pytest.mark.spark
def test_the_job_reads_the_password_from_the_store(jceks_profile, sandbox, tmp_path):
    store = f"{credstore.provider(sandbox.credential_store)}#{credstore.TARGET_ALIAS}"
    with MirrorCase(sandbox, tmp_path, target_mechanism="SCRAM-SHA-512") as case:
        file = f"file:{sandbox.scram_password_file('target')}"
        case.profile_path.write_text(case.profile_path.read_text().replace(file, store))
        profile = load_profile(case.profile_path)
        assert str(profile.target.sasl.password) == store
        case.create({"m": 2})
        sandbox.admin("target", admin_ops.create_topics, {f"src.{case.topic('m')}": 2})
        case.produce("m", records(COUNT, 2, "m"))
        run_dir = tmp_path / "run"
        assert (
            run_mirror(profile, until_caught_up=True, skip_preflight=True, run_dir=str(run_dir), keep_run_dir=True) == 0
        )
        options = (run_dir / "render" / "spark" / "sink-options.json").read_text()
        assert "${jceks-" in options and sandbox.scram_password_file("target").read_text() not in options
        assert not (run_dir / "secrets").exists()  # the job read the store itself
        result = verify(profile)
        assert result.ok and result.to_dict()["source_records"] == COUNT, result.text()
