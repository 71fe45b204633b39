"""Pre-flight on three-broker clusters (issue 40, point 2): every broker the metadata names is checked, not only the
bootstrap servers. Each fault is made for real on one broker of the session's three-broker sandbox and put back:
- broker 2's keytab holding keys that are not its principal's (as after a re-key without a new export): the KDC
  issues tickets that broker cannot read;
- broker 3 stopped while it is a bootstrap server: a warning naming it, the other checks go on;
- broker 3 serving a certificate for another host name;
- target broker 2's keytab holding wrong keys (issue 58, point 7): the requests pre-flight's ACL checks send its way
  get no answer, and those checks are unverified naming it, never a missing grant.
The profiles bootstrap through broker 1 alone where the fault must be found beyond the bootstrap servers, as a
profile listing one or two of a large cluster's brokers does."""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import FAIL, PASS, UNVERIFIED, WARN, run_preflight
from secure_mirror.profile import load_profile
from secure_mirror.render import acls as acl_plans
from secure_mirror.sandbox.tls import CertificateAuthority
from tests.support.mirror_case import MirrorCase

# CI leaves the three-broker sandbox out (slow): its six brokers' start and these suites took about 7 of CI's minutes
# (CI overran 90 at 1d870a0). By hand, with the faults: scripts/test -m slow tests/*/test_three_broker*.py
pytestmark = [pytest.mark.sandbox, pytest.mark.slow]
SIDE = "source"


def _profile(sb, folder, bootstrap: list[str]):
    data = yaml.safe_load(sb.profile_path.read_text())
    data[SIDE]["bootstrap_servers"] = bootstrap
    path = folder / f"profile-{len(bootstrap)}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_profile(path)


def _checks(profile, *ids: str):
    report = run_preflight(profile, sides=(SIDE,))
    found = {c.id.removeprefix(f"{SIDE}."): c for c in report.checks}
    assert set(ids) <= set(found), [(c.id, c.status, c.finding) for c in report.checks if c.status != PASS]
    return {what: found[what] for what in ids}, report


@pytest.fixture(scope="module")
def through_broker_1(three_brokers, tmp_path_factory):
    return _profile(three_brokers, tmp_path_factory.mktemp("pf3"), [three_brokers.broker(SIDE, 1).bootstrap])


def test_every_broker_the_metadata_names_is_checked_beyond_the_one_bootstrap_server(three_brokers, through_broker_1):
    found, report = _checks(through_broker_1, "kafka.brokers", "kerberos.broker-tickets", "kerberos.service-ticket")
    assert {what: c.status for what, c in found.items()} == dict.fromkeys(found, PASS), report.to_json()
    hosts = [b.host for b in three_brokers.brokers(SIDE)]
    assert found["kerberos.service-ticket"].finding == f"service tickets for kafka/{hosts[0]}"
    assert found["kerberos.broker-tickets"].finding == f"service tickets for kafka/{hosts[1]}, kafka/{hosts[2]}"
    assert [b["server"] for b in found["kafka.brokers"].details["brokers"]] == [
        b.bootstrap for b in three_brokers.brokers(SIDE)
    ]


def _wrong_keys(keytab: Path) -> bytes:
    """A keytab like ``keytab`` (its principal, key versions and encryption types) whose keys come from another
    password: what a broker holds after its principal was re-keyed without its keytab being exported again. Made with
    MIT's ktutil; the KDC is not touched, so putting the file back restores the broker without a restart."""
    listed = subprocess.run(["klist", "-kte", str(keytab)], capture_output=True, text=True, check=True).stdout
    entries = re.findall(r"^\s*(\d+) \S+ \S+ (\S+) \(([\w-]+)\)", listed, re.MULTILINE)
    assert entries, listed
    script = "".join(
        f"addent -password -p {p} -k {kvno} -e {enctype}\nnot-the-key-{kvno}\n" for kvno, p, enctype in entries
    )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "wrong.keytab"
        subprocess.run(["ktutil"], input=f"{script}wkt {out}\nquit\n", text=True, capture_output=True, check=True)
        return out.read_bytes()


def test_a_broker_whose_keytab_holds_wrong_keys_fails_naming_it_and_the_fix(three_brokers, through_broker_1):
    broker = three_brokers.broker(SIDE, 2)
    kept = broker.keytab.read_bytes()
    broker.keytab.write_bytes(_wrong_keys(broker.keytab))  # the broker reads its keytab again for each new login
    try:
        found, report = _checks(through_broker_1, "kafka.brokers", "kerberos.broker-tickets", "kafka.connect")
        assert found["kerberos.broker-tickets"].status == PASS  # the KDC issues the ticket: only the broker is wrong
        assert found["kafka.connect"].status == PASS
        failed = found["kafka.brokers"]
        assert failed.status == FAIL, report.to_json()
        assert "1 of the 3 brokers the metadata names" in failed.finding
        assert f"broker 2 ({broker.bootstrap}): refused the login" in failed.finding
        assert f"kafka/{broker.host}" in failed.fix and "ktadd" in failed.fix
        assert failed.details["problems"] == [{"node": 2, "server": broker.bootstrap, "kind": "login"}]
        # one cause, one failure: Kafka's Java client, which would meet broker 2 too, is not asked
        assert not [c for c in report.checks if c.id == f"{SIDE}.java.client"], report.to_json()
    finally:
        broker.keytab.write_bytes(kept)
    _eventually_passes(through_broker_1)
    three_brokers.wait_in_sync(SIDE, timeout=180)


def test_a_bootstrap_server_down_warns_then_a_wrong_certificate_fails_naming_the_broker(
    three_brokers, through_broker_1, tmp_path
):
    broker = three_brokers.broker(SIDE, 3)
    every = _profile(three_brokers, tmp_path, three_brokers.sides[SIDE].bootstrap_servers)
    saved = broker.keystore.read_bytes()
    three_brokers.stop_broker(SIDE, 3)
    try:
        found, report = _checks(every, "tls.certificate", "kafka.connect", "kafka.brokers")
        warned = found["tls.certificate"]
        assert (warned.status, warned.details) == (WARN, {"unreached": [broker.bootstrap]}), report.to_json()
        assert found["kafka.connect"].status == PASS and found["kafka.brokers"].status in (PASS, WARN)
        # broker 3 comes back with a certificate the sandbox's CA issued for another host
        ca = CertificateAuthority.load(three_brokers.ca_file, three_brokers.ca_key_file)
        ca.write_server_keystore(broker.keystore, [f"kafka-9.{three_brokers.sides[SIDE].domain}"])
        three_brokers.start_broker(SIDE, node_id=3)
        found, report = _checks(through_broker_1, "tls.certificate", "kafka.brokers")
        assert found["tls.certificate"].status == PASS  # broker 1's certificate is right
        failed = found["kafka.brokers"]
        assert failed.status == FAIL, report.to_json()
        assert f"broker 3 ({broker.bootstrap}): the certificate of {broker.host} does not name {broker.host}" in (
            failed.finding
        )
        assert failed.details["problems"] == [{"node": 3, "server": broker.bootstrap, "kind": "certificate"}]
    finally:
        broker.keystore.write_bytes(saved)
        three_brokers.restart_broker(SIDE, node_id=3)
    three_brokers.wait_in_sync(SIDE, timeout=180)
    found, report = _checks(every, "tls.certificate", "kafka.brokers")
    assert {c.status for c in found.values()} == {PASS}, report.to_json()


def _eventually_passes(profile, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while True:
        found, report = _checks(profile, "kafka.brokers")
        if found["kafka.brokers"].status == PASS:
            return
        assert time.monotonic() < deadline, report.to_json()
        time.sleep(2)


# ---- issue 58, point 7: a broker away is not a missing grant ----------------------------------------------------------
def _coordinated_by(sb, side: str, node: int, tries: int = 30) -> str:
    """A consumer group id whose coordinator is broker ``node`` (the leader of its __consumer_offsets partition), so
    that a check describing that group must ask that broker."""
    for i in range(tries):
        if sb.group_coordinator(side, group := f"pf58.g{i}") == node:
            return group
    raise AssertionError(f"none of {tries} group ids is coordinated by {side} broker {node}")


def _visible(sb, side: str, names: set[str], limit: float = 60.0) -> None:
    """New topics reach the mirror's metadata a moment after the controller accepted them."""
    deadline = time.monotonic() + limit
    while not names <= set(sb.as_mirror(side, admin_ops.list_topics)):
        assert time.monotonic() < deadline, f"the mirror does not see {sorted(names)} on {side}"
        time.sleep(0.5)


def _logins_back(profile, limit: float = 90.0) -> None:
    """The target's brokers accept the identity's login again (each broker reads its keytab again for a new login)."""
    deadline = time.monotonic() + limit
    while True:
        report = run_preflight(profile, sides=("target",))
        if report.passed("target.kafka.brokers"):
            return
        assert time.monotonic() < deadline, report.to_json()
        time.sleep(2)


def test_the_acl_checks_a_target_broker_that_cannot_be_logged_in_to_answers_are_unverified_naming_it(
    three_brokers, tmp_path
):
    """Target broker 2's key changed in the KDC (its keytab holds keys that are not its principal's): pre-flight fails
    ``target.kafka.brokers`` naming it. The requests the ACL checks send its way (the synced group's description,
    its coordinator being broker 2; the validate-only creates and the transaction when they land there) get no
    answer: those checks are unverified, naming broker 2 and its error. None fails, and none reads as a refusal
    (they read "the broker would refuse to create ...: _TIMED_OUT")."""
    sb, broker = three_brokers, three_brokers.broker("target", 2)
    group = _coordinated_by(sb, "target", 2)
    mirror = {"groups": {"include": group.replace(".", "\\.")}, "delivery": {"guarantee": "exactly_once"}}
    with MirrorCase(sb, tmp_path, mirror=mirror) as case:
        case.create({"kept": 1, "new": 1})  # src.<prefix>.new is still to create on the target
        kept_topic = case.profile.target_topic(case.topic("kept"))
        sb.admin("target", admin_ops.create_topics, {kept_topic: 1}, replication_factor=sb.replication_factor)
        _visible(sb, "source", {case.topic("kept"), case.topic("new")})
        _visible(sb, "target", {kept_topic})
        keytab = broker.keytab.read_bytes()
        broker.keytab.write_bytes(_wrong_keys(broker.keytab))  # the broker reads its keytab again for each new login
        try:
            report = run_preflight(case.profile)
        finally:
            broker.keytab.write_bytes(keytab)
            try:
                _logins_back(case.profile)
            finally:
                sb.wait_in_sync("target", timeout=180)
    checks = {c.id: c for c in report.checks}
    named = f"broker 2 ({broker.bootstrap})"
    brokers = checks["target.kafka.brokers"]
    assert brokers.status == FAIL and f"{named}: refused the login" in brokers.finding, report.to_json()
    acl = [c for c in report.checks if c.id.startswith("target.acl.")]
    assert [c.id for c in acl if c.status == FAIL] == [], report.to_json()
    read = checks["target.acl.group-read"]  # its coordinator is broker 2: it asked broker 2, deterministically
    assert read.status == UNVERIFIED and read.proven_by == "target.audit.group-read", report.to_json()
    principal = acl_plans.target_acls(case.profile).principal
    assert read.finding.startswith(
        f"whether {principal} may READ the consumer groups {group} is not known: the brokers gave no answer ("
    ), read
    unanswered = [c for c in acl if "the brokers gave no answer" in c.finding]
    assert read in unanswered, report.to_json()
    for c in unanswered:
        assert c.status == UNVERIFIED and not c.acls, c
        assert f"this identity could not ask {named}: SASL authentication error" in c.finding, c
        assert "refuse" not in c.finding + c.fix and "may not" not in c.finding, c
    assert not [c for c in report.checks if "would refuse" in c.finding], report.to_json()
