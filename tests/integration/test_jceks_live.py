"""A Hadoop credential store, live: the sandbox's ``secrets/mirror.jceks`` (made with ``hadoop credential create``,
sandbox/credstore.py) holds the target's SCRAM-SHA-512 password, and ``profile-jceks.yaml`` names it
``jceks://file/...#target-scram``. Pre-flight logs in to the target with the password read through Hadoop's
CredentialProviderFactory; Kafka's own TopicCommand logs in with client properties that hold no password, only
``${jceks:target-scram}``, resolved by our config provider (jvm/sink securemirror.config)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.preflight import PASS, run_preflight
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.sandbox import credstore

pytestmark = pytest.mark.sandbox
PROVIDER_CLASS = "securemirror.config.HadoopCredentialConfigProvider"


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
    render_all(jceks_profile, out)
    password = sandbox.scram_password_file("target").read_text()
    lines = (out / "target" / "client.properties").read_text().splitlines()
    jaas = [line for line in lines if line.startswith("sasl.jaas.config=")]
    assert len(jaas) == 1 and password in jaas[0]  # render writes values today (issue 59, point 1)
    properties = tmp_path / "client.properties"
    properties.write_text(
        "\n".join(line for line in lines if not line.startswith("sasl.jaas.config="))
        + "\nconfig.providers=jceks\n"
        + f"config.providers.jceks.class={PROVIDER_CLASS}\n"
        + f"config.providers.jceks.param.path={credstore.provider(sandbox.credential_store)}\n"
        + jaas[0].replace(password, "${jceks:" + credstore.TARGET_ALIAS + "}")
        + "\n"
    )
    assert password not in properties.read_text()
    ran = _topic_list(sandbox, properties)
    assert ran.returncode == 0, ran.stderr[-3000:]
    wrong = tmp_path / "wrong-alias.properties"
    wrong.write_text(properties.read_text().replace("${jceks:target-scram}", "${jceks:target-scram-old}"))
    refused = _topic_list(sandbox, wrong)
    assert (
        refused.returncode != 0
        and (f"the credential store {credstore.provider(sandbox.credential_store)} has no alias target-scram-old")
        in refused.stdout + refused.stderr
    ), refused.stderr[-3000:]


def _topic_list(sandbox, properties: Path) -> subprocess.CompletedProcess:
    jars = Path(paths.pyspark_jars_dir() or "")
    hadoop = ":".join(str(jar) for jar in sorted(jars.glob("hadoop-client-*.jar")))
    return subprocess.run(
        [paths.java_executable(), "-Xmx256m", f"-Dorg.apache.kafka.automatic.config.providers={PROVIDER_CLASS}",
         "-cp", f"{paths.sink_jar()}:{hadoop}:{paths.kafka_classpath()}", "org.apache.kafka.tools.TopicCommand",
         "--bootstrap-server", sandbox.sides["target"].bootstrap, "--command-config", str(properties), "--list"],
        capture_output=True, text=True, timeout=180, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
