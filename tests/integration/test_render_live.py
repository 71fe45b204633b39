"""The rendered files work with programs nobody here wrote, against the real sandbox: Kafka's console
tools (Java) with client.properties and jaas.conf, kcat with librdkafka.conf, MirrorMaker 2 with
mm2.properties, and Spark reading the source and writing the target with two identities in one JVM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from tests.support.cluster import (
    consume_to_end,
    kcat_consume,
    mirrormaker2,
    plain_records,
    topic_acls,
    unique,
    wait_for_mirrored,
)

pytestmark = pytest.mark.sandbox
REPO = Path(__file__).resolve().parents[2]
GRANTED: dict[str, list[dict]] = {}  # the module fixture's grants, per side


@pytest.fixture(scope="module")
def rendered(sandbox, tmp_path_factory):
    """The sandbox profile rendered, and the rendered ACLs granted for the module's duration."""
    out = tmp_path_factory.mktemp("render") / "out"
    render_all(load_profile(sandbox.profile_path), out)
    acls = {side: json.loads((out / "acls" / f"{side}.acls.json").read_text()) for side in ("source", "target")}
    extra = {
        "source": topic_acls("demo.", "WRITE", pattern="PREFIXED"),  # to produce test data as the mirror
        "target": topic_acls("src.demo.", "READ", pattern="PREFIXED")
        + [
            {
                "resource_type": "GROUP",
                "resource_name": "secure-mirror-src-tgt",
                "pattern_type": "PREFIXED",
                "principal": "User:mirror",
                "operation": "READ",
            }
        ],
    }
    GRANTED.update({side: acls[side] + extra[side] for side in acls})
    for side in acls:
        sandbox.admin(side, admin_ops.create_acls, GRANTED[side])
    yield out
    for side in acls:
        sandbox.admin(side, admin_ops.delete_acls, acls[side] + extra[side])


def java(*args: str, krb5: Path, jaas: Path | None = None) -> list[str]:
    props = [f"-Djava.security.krb5.conf={krb5}"] + ([f"-Djava.security.auth.login.config={jaas}"] if jaas else [])
    return [paths.java_executable(), "-Xmx256m", *props, "-cp", paths.kafka_classpath(), *args]


def without_inline_jaas(client_properties: Path, dest: Path) -> Path:
    lines = [l for l in client_properties.read_text().splitlines() if not l.startswith("sasl.jaas.config")]
    dest.write_text("\n".join(lines) + "\n")
    return dest


def mirror_read(sandbox, side: str, topic: str) -> list[dict]:
    """Every record of ``topic`` as the mirror, to each partition's end (a record more than expected is seen)."""
    return sandbox.as_mirror(side, consume_to_end, topic, group_id="secure-mirror-src-tgt-check")


def test_kafka_console_tools_use_rendered_jaas_conf_and_client_properties(sandbox, rendered, tmp_path):
    topic = unique("demo.console")
    sandbox.admin("source", admin_ops.create_topics, {topic: 1})
    # Producer: the JAAS file (KafkaClient section) through -Djava.security.auth.login.config.
    producer_props = without_inline_jaas(rendered / "source" / "client.properties", tmp_path / "p.properties")
    subprocess.run(
        java(
            "org.apache.kafka.tools.ConsoleProducer",
            "--bootstrap-server",
            sandbox.sides["source"].bootstrap,
            "--topic",
            topic,
            "--command-config",
            str(producer_props),
            krb5=rendered / "krb5.conf",
            jaas=rendered / "source" / "jaas.conf",
        ),
        input="one\ntwo\nthree\n",
        text=True,
        check=True,
        capture_output=True,
        timeout=120,
    )
    # Consumer: client.properties alone (sasl.jaas.config inline).
    out = subprocess.run(
        java(
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "--bootstrap-server",
            sandbox.sides["source"].bootstrap,
            "--topic",
            topic,
            "--from-beginning",
            "--max-messages",
            "3",
            "--timeout-ms",
            "60000",
            "--group",
            "secure-mirror-src-tgt-console",
            "--command-config",
            str(rendered / "source" / "client.properties"),
            krb5=rendered / "krb5.conf",
        ),
        text=True,
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert out.stdout.split() == ["one", "two", "three"]


def test_kafka_console_producer_writes_the_target_with_its_own_identity(sandbox, rendered):
    topic = unique("src.demo.console")
    sandbox.admin("target", admin_ops.create_topics, {topic: 1})
    subprocess.run(
        java(
            "org.apache.kafka.tools.ConsoleProducer",
            "--bootstrap-server",
            sandbox.sides["target"].bootstrap,
            "--topic",
            topic,
            "--command-config",
            str(rendered / "target" / "client.properties"),
            krb5=rendered / "krb5.conf",
        ),
        input="a\nb\n",
        text=True,
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert sorted(r["value"] for r in mirror_read(sandbox, "target", topic)) == [b"a", b"b"]


def test_kcat_reads_and_writes_both_clusters_with_rendered_librdkafka_conf(sandbox, rendered, tmp_path):
    env = {
        "PATH": os.environ["PATH"],
        "KRB5_CONFIG": str(rendered / "krb5.conf"),
        "KRB5CCNAME": f"DIR:{tmp_path / 'cc'}",
    }
    (tmp_path / "cc").mkdir(mode=0o700)
    for side, topic in (("source", unique("demo.kcat")), ("target", unique("src.demo.kcat"))):
        sandbox.admin(side, admin_ops.create_topics, {topic: 1})
        conf = str(rendered / side / "librdkafka.conf")
        subprocess.run(
            ["kcat", "-F", conf, "-P", "-t", topic],
            input="x1\nx2\n",
            text=True,
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        got = subprocess.run(
            ["kcat", "-F", conf, "-C", "-t", topic, "-o", "beginning", "-e", "-c", "2"],
            text=True,
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
        assert got.stdout.split() == ["x1", "x2"], (side, got.stderr[-500:])


@pytest.mark.spark
def test_spark_reads_source_and_writes_target_with_two_identities_in_one_jvm(sandbox, rendered):
    src, tgt = unique("demo.spark"), None
    tgt = f"src.{src}"
    sandbox.admin("source", admin_ops.create_topics, {src: 2})
    sandbox.admin("target", admin_ops.create_topics, {tgt: 2})
    sandbox.admin("source", admin_ops.produce, src, plain_records(50, "sp"))
    res = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("spark_copy.py")), str(rendered / "spark"), src, tgt],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == {"copied": 50}
    got = mirror_read(sandbox, "target", tgt)
    assert sorted(r["key"] for r in got) == sorted(f"sp-{i}".encode() for i in range(50))


def test_mirrormaker2_mirrors_a_topic_with_rendered_mm2_properties_and_rendered_acls_alone(sandbox, rendered, tmp_path):
    """MirrorMaker 2 works with acls/mm2-*.acls.json alone: the module's grants are lifted while it runs and
    nothing is granted by hand (its internal topics, Connect worker group and topic configs included)."""
    topic = unique("demo.mm2")
    sandbox.admin("source", admin_ops.create_topics, {topic: 1})
    sandbox.admin("source", admin_ops.produce, topic, plain_records(20, "mm"))
    granted = GRANTED
    mm2_acls = {
        side: json.loads((rendered / "acls" / f"mm2-{side}.acls.json").read_text()) for side in ("source", "target")
    }
    for side in mm2_acls:
        sandbox.admin(side, admin_ops.delete_acls, granted[side])
        sandbox.admin(side, admin_ops.create_acls, mm2_acls[side])
    log = tmp_path / "mm2.log"
    krb5 = [f"-Djava.security.krb5.conf={rendered / 'krb5.conf'}"]
    try:
        with mirrormaker2(rendered / "mm2" / "mm2.properties", log, krb5):
            wait_for_mirrored(sandbox, f"src.{topic}", 20, log)
    finally:
        for side in mm2_acls:
            sandbox.admin(side, admin_ops.delete_acls, mm2_acls[side])
            sandbox.admin(side, admin_ops.create_acls, granted[side])


def test_a_scram_password_full_of_jaas_metacharacters_still_authenticates(sandbox, tmp_path):
    """A password with ", \\, ;, = and spaces goes through the rendered JAAS and librdkafka files intact."""
    import yaml

    password = 'p"a\\s;s= w0rd=;"\\ end'
    secret = tmp_path / "hostile.password"
    secret.touch(mode=0o600)
    secret.write_text(password)
    sandbox.admin("target", admin_ops.upsert_scram_user, "hostile", str(secret))
    data = yaml.safe_load((sandbox.base / "profile-scram.yaml").read_text())
    data["target"]["sasl"] = {"mechanism": "SCRAM-SHA-512", "username": "hostile", "password": f"file:{secret}"}
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    render_all(load_profile(tmp_path / "profile.yaml"), out)
    topic = unique("src.demo.hostile")
    sandbox.admin("target", admin_ops.create_topics, {topic: 1})
    acls = topic_acls(topic, "WRITE", "READ", "DESCRIBE", principal="User:hostile")
    sandbox.admin("target", admin_ops.create_acls, acls)
    try:
        subprocess.run(
            java(
                "org.apache.kafka.tools.ConsoleProducer",
                "--bootstrap-server",
                sandbox.sides["target"].bootstrap,
                "--topic",
                topic,
                "--command-config",
                str(out / "target" / "client.properties"),
                krb5=out / "krb5.conf",
            ),
            input="java\n",
            text=True,
            check=True,
            capture_output=True,
            timeout=120,
        )
        got = kcat_consume(out / "target" / "librdkafka.conf", topic, "-c", "1")
    finally:
        sandbox.admin("target", admin_ops.delete_acls, acls)
    assert got.returncode == 0 and got.stdout.split() == ["java"], got.stderr[-1500:]
