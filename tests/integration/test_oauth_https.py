"""OAUTHBEARER with a token endpoint over HTTPS whose certificate comes from a private CA (the sandbox's), named in the
profile as ``sasl.token_endpoint_ca``: what estates with an internal identity provider run. The sandbox's identity
provider serves the same endpoints over https (``idp.corp.test``) beside its http ones; the brokers check the tokens
against its JWKS as for test_mechanisms_live.py.

Kafka's Java client (the job, the console tools, pre-flight's Java probe) trusts that CA through the JAAS options;
secure_mirror's librdkafka clients (pre-flight, lag, verify) fetch the token in Python trusting it
(secure_mirror/kafka/oauth.py), so pre-flight passes without the http warning; kcat with the rendered librdkafka.conf
cannot (librdkafka 2.8 checks token endpoints against the system's CA store only), shown here with its error.
The module's aliases (hsrc/htgt) and topics (oauthhttps.*) are its own.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.oauth import TokenError, fetch_token
from secure_mirror.preflight import FAIL, UNVERIFIED, WARN, run_preflight
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.render.java_properties import OAUTH_ALLOWED_URLS
from secure_mirror.run.launcher import run_mirror
from secure_mirror.verify import verify
from tests.support.cluster import group_acls, kcat_consume, topic_acls, unique
from tests.support.mirror_case import records

pytestmark = pytest.mark.sandbox
COUNT = 200


@pytest.fixture(scope="module")
def https(sandbox, tmp_path_factory):
    if not sandbox.https_token_endpoint:
        pytest.skip("this sandbox was started before its identity provider served https; start a new one")
    folder = tmp_path_factory.mktemp("oauth-https")
    data = yaml.safe_load((sandbox.base / "profile-oauth-mtls.yaml").read_text())
    data["source"]["alias"], data["target"]["alias"] = "hsrc", "htgt"
    data["source"]["sasl"] |= {
        "token_endpoint_url": sandbox.https_token_endpoint,
        "token_endpoint_ca": str(sandbox.ca_file),
    }
    data["mirror"]["topics"]["include"] = "oauthhttps\\..*"
    data["mirror"]["checkpoint_location"] = str(folder / "checkpoint")
    (folder / "profile.yaml").write_text(yaml.safe_dump(data))
    profile = load_profile(folder / "profile.yaml")
    out = folder / "out"
    render_all(profile, out)
    topic, console = unique("oauthhttps.t"), unique("oauthcon.t")
    sandbox.admin("source", admin_ops.create_topics, {topic: 2, console: 1})
    sandbox.admin("target", admin_ops.create_topics, {profile.target_topic(topic): 2})
    sandbox.admin("source", admin_ops.produce, topic, records(COUNT, 2, "oh"))
    principal = profile.source.kafka_principal
    grants = {side: json.loads((out / "acls" / f"{side}.acls.json").read_text()) for side in ("source", "target")}
    grants["source"] += topic_acls(console, "WRITE", "READ", "DESCRIBE", principal=principal) + group_acls(
        f"{profile.group_prefix}-console", principal=principal
    )
    grants["target"] += topic_acls(profile.target_topic(topic), "READ", principal=profile.target.kafka_principal)
    for side, acls in grants.items():
        sandbox.admin(side, admin_ops.create_acls, acls)
    yield {"profile": profile, "out": out, "folder": folder, "topic": topic, "console": console}
    for side, acls in grants.items():
        sandbox.admin(side, admin_ops.delete_acls, acls)
    sandbox.admin("source", admin_ops.delete_topics, [topic, console])
    sandbox.admin("target", admin_ops.delete_topics, [profile.target_topic(topic)])


def test_preflight_passes_with_nothing_weak_left(https):
    report = run_preflight(https["profile"])
    assert {c.id: c.finding for c in report.checks if c.status in (FAIL, WARN, UNVERIFIED)} == {}, report.to_json()
    assert report.get("source.java.client").status == "pass"  # the Java client trusted the CA through JAAS
    assert "authenticated as User:mirror " in report.get("source.kafka.connect").finding


def test_kafka_console_tools_log_in_and_kcat_cannot(sandbox, https):
    out, cluster, topic = https["out"], https["profile"].source, https["console"]

    def tool(main: str, *args: str, stdin: str | None = None) -> str:
        argv = [
            paths.java_executable(),
            "-Xmx256m",
            "-XX:TieredStopAtLevel=1",
            f"-D{OAUTH_ALLOWED_URLS}={cluster.sasl.token_endpoint_url}",
            "-cp",
            paths.kafka_classpath(),
            main,
            "--bootstrap-server",
            cluster.first_broker,
            "--command-config",
            str(out / "source" / "client.properties"),
            "--topic",
            topic,
            *args,
        ]
        done = subprocess.run(argv, input=stdin, text=True, capture_output=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    tool("org.apache.kafka.tools.ConsoleProducer", stdin="one\ntwo\n")
    consumed = tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "--from-beginning",
        "--max-messages",
        "2",
        "--timeout-ms",
        "60000",
        "--group",
        f"{https['profile'].group_prefix}-console",
    )
    assert consumed.split() == ["one", "two"]
    kcat = kcat_consume(out / "source" / "librdkafka.conf", topic, "-c", "2", "-m", "10")
    assert kcat.returncode != 0
    assert "Failed to retrieve OIDC token" in kcat.stderr and "SSL certificate problem" in kcat.stderr, kcat.stderr
    assert "checks the token endpoint's certificate" in (out / "source" / "librdkafka.conf").read_text()


def test_a_wrong_client_secret_is_refused_by_the_token_endpoint(sandbox, https):
    with pytest.raises(TokenError, match="answered 401"):
        fetch_token(sandbox.https_token_endpoint, "mirror", "not-the-secret", None, str(sandbox.ca_file), 10)


@pytest.mark.spark
def test_the_job_mirrors_with_a_token_from_the_https_endpoint(https):
    assert (
        run_mirror(https["profile"], until_caught_up=True, skip_preflight=True, run_dir=str(https["folder"] / "run"))
        == 0
    )
    result = verify(https["profile"])
    assert result.ok and result.to_dict()["source_records"] == COUNT, result.text()
