"""A mirror identity from a trusted corporate realm, on the real sandbox: mirror@CORP.TEST logs in to both
clusters (whose realms trust CORP.TEST), each side's brokers map it with their
sasl.kerberos.principal.to.local.rules to User:mirror, and the profile's principal_mapping carries the same rules.
Render, pre-flight (librdkafka) and Kafka's console tools (Java) with the rendered files all work with it.

The module uses its own aliases (xrsrc/xrtgt) and topics (xrealm.*) so its ACLs never touch other tests'.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.identity import kerberos_env
from secure_mirror.kafka.processes import IsolatedCallError, call_kept
from secure_mirror.preflight import FAIL, PASS, WARN, run_preflight
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile import load_profile
from secure_mirror.profile.loader import ProfileError
from secure_mirror.render import render_all
from secure_mirror.run.clients import watermarks
from secure_mirror.run.launcher import run_mirror
from secure_mirror.verify import verify
from tests.support.cluster import heartbeats_topic_made, plain_records, topic_acls, unique

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def corp(sandbox, tmp_path_factory):
    if not sandbox.corp:
        pytest.skip("this sandbox was started before it had the CORP.TEST realm; start a new one")
    folder = tmp_path_factory.mktemp("corp")
    data = yaml.safe_load((sandbox.base / "profile-corp.yaml").read_text())
    data["source"]["alias"], data["target"]["alias"] = "xrsrc", "xrtgt"
    data["mirror"]["topics"]["include"] = "xrealm\\..*"
    data["mirror"]["checkpoint_location"] = str(folder / "checkpoint")
    (folder / "profile.yaml").write_text(yaml.safe_dump(data))
    profile = load_profile(folder / "profile.yaml")
    out = folder / "out"
    render_all(profile, out)
    topic = unique("xrealm.t")
    sandbox.admin("source", admin_ops.create_topics, {topic: 1})
    sandbox.admin("target", admin_ops.create_topics, {f"xrsrc.{topic}": 1})
    sandbox.admin("target", heartbeats_topic_made)  # pre-flight proves WRITE on it, whichever test ran before
    grants = {side: json.loads((out / "acls" / f"{side}.acls.json").read_text()) for side in ("source", "target")}
    grants["source"] += topic_acls(topic, "WRITE")  # to produce test data as the mirror
    grants["target"] += topic_acls(f"xrsrc.{topic}", "READ")  # verify reads the target as the mirror
    for side, acls in grants.items():
        sandbox.admin(side, admin_ops.create_acls, acls)
    yield {"profile": profile, "out": out, "topic": topic}
    for side, acls in grants.items():
        sandbox.admin(side, admin_ops.delete_acls, acls)
    sandbox.admin("source", admin_ops.delete_topics, [topic])
    sandbox.admin("target", admin_ops.delete_topics, [f"xrsrc.{topic}"])


def test_the_profile_derives_the_principal_the_brokers_give(corp):
    profile = corp["profile"]
    assert profile.source.sasl.principal == profile.target.sasl.principal == "mirror@CORP.TEST"
    assert profile.source.kafka_principal == profile.target.kafka_principal == "User:mirror"
    script = (corp["out"] / "acls" / "apply-acls.sh").read_text()
    assert "from mirror@CORP.TEST by sasl.kerberos.principal.to.local.rules=" in script


def test_preflight_passes_on_both_sides_with_the_corporate_identity(corp):
    report = run_preflight(corp["profile"])
    assert {c.id for c in report.checks if c.status in (FAIL, WARN)} == set(), report.to_json()
    for side in ("source", "target"):
        assert "mirror@CORP.TEST" in report.get(f"{side}.kerberos.initial-ticket").finding
        assert "authenticated as User:mirror" in report.get(f"{side}.kafka.connect").finding


def test_kafka_console_tools_produce_and_consume_with_the_rendered_files(sandbox, corp):
    out, topic = corp["out"], corp["topic"]

    def tool(*args: str, stdin: str | None = None) -> str:
        argv = [
            paths.java_executable(),
            "-Xmx256m",
            f"-Djava.security.krb5.conf={out / 'krb5.conf'}",
            "-cp",
            paths.kafka_classpath(),
            *args,
            "--bootstrap-server",
            sandbox.sides["source"].bootstrap,
            "--topic",
            topic,
            "--command-config",
            str(out / "source" / "client.properties"),
        ]
        return subprocess.run(argv, input=stdin, text=True, check=True, capture_output=True, timeout=180).stdout

    # the module's other tests may have written to the topic first: read everything, the two last
    ((_, before),) = sandbox.admin("source", watermarks, [topic]).values()
    tool("org.apache.kafka.tools.ConsoleProducer", stdin="one\ntwo\n")
    consumed = tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--from-beginning",
        "--max-messages",
        str(before + 2),
        "--timeout-ms",
        "60000",
        "--group",
        "secure-mirror-xrsrc-xrtgt-console",
    )
    assert consumed.splitlines()[before:] == ["one", "two"]


def test_a_corporate_name_no_rule_maps_is_refused_by_the_brokers_and_by_validate(sandbox, corp, tmp_path):
    """mirror/batch@CORP.TEST has two components: the brokers' rule takes one, and DEFAULT only SOURCE.TEST. The
    broker refuses its login, and validate refuses a profile naming it, with the sentence (same rules, same answer)."""
    principal, keytab = "mirror/batch@CORP.TEST", tmp_path / "batch.keytab"
    kdc = sandbox.kdc()
    kdc.add_principal(principal, keytab)
    try:
        conf = sandbox.client_conf("source") | {
            "sasl.kerberos.principal": principal,
            "sasl.kerberos.keytab": str(keytab),
        }
        env = kerberos_env(str(sandbox.krb5_conf), str(tmp_path / "ccache"))
        with pytest.raises(IsolatedCallError):  # librdkafka's authentication failure, whatever its wording
            call_kept(env, admin_ops.list_topics, conf)
        broker_log = sandbox.broker("source").log.read_text(errors="replace")
        assert f"NoMatchingRule: No rules apply to {principal}" in broker_log  # the mapping refused it, not Kerberos
        data = yaml.safe_load((sandbox.base / "profile-corp.yaml").read_text())
        data["source"]["sasl"] |= {"principal": principal, "keytab": str(keytab)}
        (tmp_path / "profile.yaml").write_text(yaml.safe_dump(data))
        with pytest.raises(ProfileError) as caught:
            load_profile(tmp_path / "profile.yaml")
        assert caught.value.problems[0].startswith(
            "source.principal_mapping.principal_to_local_rules: no rule maps "
            "mirror/batch@CORP.TEST to a Kafka principal"
        )
    finally:
        kdc.delete_principal(principal)


def test_the_admin_audit_proves_every_grant_of_the_corporate_identity(sandbox, corp):
    """The audit (--as-admin) reads the clusters' ACLs and evaluates them for User:mirror, the principal the brokers
    give mirror@CORP.TEST: every required permission proven on both sides."""
    admin = admin_clusters(
        corp["profile"],
        ",".join(
            f"{side}.principal={sandbox.sides[side].admin_principal},{side}.keytab={sandbox.keytab(side, 'admin')}"
            for side in ("source", "target")
        ),
    )
    report = run_preflight(corp["profile"], admin=admin)
    audits = [c for c in report.checks if ".audit." in c.id]
    assert audits and {c.status for c in audits} == {PASS}, report.to_json()
    assert report.ok() and report.unproven() == [], report.to_json()


def test_the_corporate_identity_mirrors_and_verify_agrees(sandbox, corp, tmp_path):
    sandbox.admin("source", admin_ops.produce, corp["topic"], plain_records(30, "xr"))
    assert run_mirror(corp["profile"], until_caught_up=True, run_dir=str(tmp_path / "run")) == 0
    result = verify(corp["profile"])
    assert result.ok and result.to_dict()["source_records"] >= 30, result.text()
