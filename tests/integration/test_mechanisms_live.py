"""Every mechanism the profile accepts, live on the sandbox: PLAIN and SCRAM-SHA-256 (SASL_SSL), OAUTHBEARER
against the sandbox's identity provider (client credentials, RS256 JWTs the brokers check against its JWKS) and
SSL with a client certificate (the brokers map CN=mirror.<domain> to User:mirror by ssl.principal.mapping.rules).
GSSAPI and SCRAM-SHA-512 are shown by test_run_mirror.py and test_cross_realm.py.

Two mirrors cover the four, one mechanism per side: PLAIN -> SCRAM-SHA-256 and OAUTHBEARER -> SSL. For each:
render, pre-flight (every check proven), the mirror and verify, then the rendered files used by Kafka's console
consumer (client.properties) and kcat (librdkafka.conf) on both sides.
"""

from __future__ import annotations

import pytest

from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import FAIL, PASS, run_preflight
from secure_mirror.render import render_all
from secure_mirror.render.java_properties import OAUTH_ALLOWED_URLS
from secure_mirror.run.launcher import run_mirror
from secure_mirror.verify import verify
from tests.support.cluster import console_consume, granted, group_acls, heartbeats_topic_made, kcat_consume
from tests.support.mirror_case import MirrorCase, records

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
PAIRS = [("PLAIN", "SCRAM-SHA-256"), ("OAUTHBEARER", "SSL")]
COUNT = 40


@pytest.fixture(scope="module", params=PAIRS, ids=[f"{s}->{t}" for s, t in PAIRS])
def pair(request, sandbox, tmp_path_factory):
    if not (sandbox.oauth and sandbox.sides["source"].ssl_port):
        pytest.skip("this sandbox was started before it had the identity provider and SSL listeners; start a new one")
    source_mechanism, target_mechanism = request.param
    folder = tmp_path_factory.mktemp("mech")
    with MirrorCase(sandbox, folder, source_mechanism=source_mechanism, target_mechanism=target_mechanism) as case:
        out = folder / "out"
        render_all(case.profile, out)
        case.create({"m": 2})
        sandbox.admin("target", admin_ops.create_topics, {f"src.{case.topic('m')}": 2})  # pre-flight proves WRITE
        sandbox.admin("target", heartbeats_topic_made)  # and on the heartbeats topic, whichever test ran before
        case.produce("m", records(COUNT, 2, "m"))
        with granted(sandbox, "target", group_acls(_console_group(case, "target"))):  # the console consumer's
            yield {"case": case, "out": out, "folder": folder, "mechanisms": request.param}


def _console_group(case, side: str) -> str:
    return f"{case.profile.group_prefix}-console-{side}"


def test_the_profile_names_the_principal_each_mechanism_gives(pair):
    profile = pair["case"].profile
    assert (profile.source.mechanism, profile.target.mechanism or "SSL") == pair["mechanisms"]
    assert profile.source.kafka_principal == profile.target.kafka_principal == "User:mirror"


def test_preflight_proves_every_check(pair):
    report = run_preflight(pair["case"].profile)
    failed = {c.id: c.finding for c in report.checks if c.status == FAIL}
    assert failed == {}, report.to_json()
    others = {c.id for c in report.checks if c.status not in (PASS, "skipped")}
    # The only finding left: the sandbox's identity provider speaks http (see secure_mirror/sandbox/oidc.py).
    expected = {"source.config.weak-settings"} if pair["mechanisms"][0] == "OAUTHBEARER" else set()
    assert others == expected, report.to_json()
    for side in ("source", "target"):
        assert "User:mirror" in report.get(f"{side}.kafka.connect").finding


def test_the_mirror_copies_every_record_and_verify_agrees(pair):
    case = pair["case"]
    assert run_mirror(case.profile, until_caught_up=True, skip_preflight=True, run_dir=str(pair["folder"] / "run")) == 0
    result = verify(case.profile)
    assert result.ok and result.to_dict()["source_records"] == COUNT, result.text()


@pytest.mark.parametrize("side", ["source", "target"])
def test_console_consumer_and_kcat_read_with_the_rendered_files(sandbox, pair, side):
    case, out = pair["case"], pair["out"]
    if side == "target":  # the mirrored topic: the mirror must have run (the test above)
        assert verify(case.profile).ok
    topic = case.topic("m") if side == "source" else f"src.{case.topic('m')}"
    cluster = case.profile.cluster(side)
    java_props = (
        [f"-D{OAUTH_ALLOWED_URLS}={cluster.sasl.token_endpoint_url}"] if cluster.mechanism == "OAUTHBEARER" else []
    )
    console = console_consume(
        cluster.bootstrap_servers[0],
        topic,
        out / side / "client.properties",
        COUNT,
        _console_group(case, side),
        java_props,
    )
    assert console.returncode == 0 and len(console.stdout.splitlines()) == COUNT, console.stderr[-3000:]
    kcat = kcat_consume(out / side / "librdkafka.conf", topic, "-q", "-f", "%s\\n", timeout=120)
    assert kcat.returncode == 0 and len(kcat.stdout.splitlines()) == COUNT, kcat.stderr[-3000:]
