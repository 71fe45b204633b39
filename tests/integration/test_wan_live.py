"""The mirror across a link (docs/wan.md): the shared sandbox's source brokers reached through Toxiproxy at a 50 ms
round trip (sandbox/wan.py, the WAN listener every source broker has), in both guarantees. The link is shown to be
there (pre-flight's probe measures the round trip through it and beside it), and every record is counted on the
target by kcat, a reader this project did not write (read_committed: exactly_once's aborted writes would not count).
The proxy runs for this module only; the other modules' profiles reach the source directly."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from secure_mirror.preflight.probes import round_trip, tls
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.sandbox.wan import Link
from tests.support import seeds
from tests.support.cluster import kcat_consume
from tests.support.mirror_case import MirrorCase, records

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
RTT_MS = 50


@pytest.fixture(scope="module")
def link(sandbox):
    """The shared sandbox with its proxy at a 50 ms round trip; stopped after the module."""
    if "wan" not in sandbox.state:  # SECURE_MIRROR_TEST_SANDBOX naming one started before the WAN listener
        pytest.skip("this sandbox was started before its source brokers had the WAN listener; start a new one")
    sandbox.start_wan(Link(RTT_MS))
    try:
        yield sandbox
    finally:
        sandbox.stop_wan()


def _servers(bootstrap: list[str]) -> list[tuple[str, int]]:
    return [(server.rsplit(":", 1)[0], int(server.rsplit(":", 1)[1])) for server in bootstrap]


def test_the_link_adds_its_round_trip_and_the_direct_listener_does_not(link):
    context = tls.context_for(load_profile(link.profile_path).source.tls_settings)
    through = round_trip.measure(_servers(link.wan_bootstrap_servers()), context, 10.0)
    direct = round_trip.measure(_servers(link.sides["source"].bootstrap_servers), context, 10.0)
    assert all(answer.get("ms", 0) >= RTT_MS * 0.95 for answer in through.values()), through
    assert all(answer.get("ms", RTT_MS) < RTT_MS / 2 for answer in direct.values()), direct
    assert not (link.base / "profile.yaml").read_text().count(link.wan_bootstrap_servers()[0])
    assert link.wan_bootstrap_servers()[0] in (link.base / "profile-wan.yaml").read_text()


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
def test_the_mirror_copies_every_record_across_the_link(link, tmp_path, monkeypatch, guarantee):
    rng = seeds.seeded(f"wan {guarantee} records")
    count = rng.randint(150, 300)
    with MirrorCase(link, tmp_path, mirror={"delivery": {"guarantee": guarantee}}) as case:
        data = yaml.safe_load(case.profile_path.read_text())
        data["source"]["bootstrap_servers"] = link.wan_bootstrap_servers()  # the mirror's side of the link
        case.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
        case.profile = load_profile(case.profile_path)
        case.create({"w": 3})
        case.produce("w", records(count, 3, "w"))
        done = subprocess.run(
            case.run_argv(tmp_path / "run", "--until-caught-up"), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        rendered = tmp_path / "rendered"
        render_all(case.profile, rendered)
        (tmp_path / "cc").mkdir(mode=0o700)
        monkeypatch.setenv("KRB5_CONFIG", str(rendered / "krb5.conf"))
        monkeypatch.setenv("KRB5CCNAME", f"DIR:{tmp_path / 'cc'}")
        target = case.profile.target_topic(case.topic("w"))
        read = kcat_consume(
            rendered / "target" / "librdkafka.conf", target, "-f", "%p:%o\\n", "-X", "isolation.level=read_committed"
        )
        assert read.returncode == 0, read.stderr[-2000:]
        positions = read.stdout.split()
        assert len(positions) == count and len(set(positions)) == count, (count, len(positions), read.stderr[-500:])
