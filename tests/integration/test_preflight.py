"""Pre-flight against the real sandbox: a provisioned setup passes, and each fault introduced on the real KDC
and brokers is reported by exactly the check that names it. One sandbox for the module; every test puts the
sandbox back as it found it (ACLs revoked, principals and keytabs restored, the KDC restarted).

The module uses its own aliases (pfsrc/pftgt) and topics (preflight.*) so its ACLs never touch other tests'.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from secure_mirror.kafka import acl_answers, admin_ops
from secure_mirror.kafka.acl import Acl, operation_word
from secure_mirror.preflight import FAIL, SKIPPED, WARN, run_preflight
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.preflight.checks.audit import ADMIN_FIX, NOT_JUDGED
from secure_mirror.profile import load_profile
from secure_mirror.render import acls as acl_plans
from secure_mirror.run import heartbeats
from tests.support.cluster import granted
from tests.support.output_schemas import assert_valid

pytestmark = pytest.mark.sandbox

SOURCE_TOPICS = {"preflight.a": 3, "preflight.b": 2, "unrelated.topic": 1}
TARGET_TOPICS = {"pfsrc.preflight.a": 3}  # pfsrc.preflight.b is left for the mirror to create
REPO = Path(__file__).resolve().parents[2]


# ---- helpers --------------------------------------------------------------------------------------------
def write_profile(sb, folder: Path, name: str = "profile.yaml", **changes) -> Path:
    """The sandbox's profile with this module's aliases and topics, plus ``changes`` ("source.tls.ca": ...)."""
    data = yaml.safe_load(sb.profile_path.read_text())
    data["source"]["alias"], data["target"]["alias"] = "pfsrc", "pftgt"
    data["mirror"]["topics"]["include"] = "preflight\\..*"
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    path = folder / name
    path.write_text(yaml.safe_dump(data))
    return path


def rendered(profile) -> dict[str, list[Acl]]:
    return {"source": acl_plans.source_acls(profile).bindings, "target": acl_plans.target_acls(profile).bindings}


def one(acls: list[Acl], operation: str, resource_type: str = "TOPIC") -> Acl:
    return next(a for a in acls if a.operation == operation and a.resource_type == resource_type)


def not_passing(report) -> set[str]:
    return {c.id for c in report.checks if c.status in (FAIL, WARN)}


@contextmanager
def acls_removed(sb, side: str, acls: list[Acl]):
    sb.admin(side, admin_ops.delete_acls, acls)
    try:
        yield
    finally:
        sb.admin(side, admin_ops.create_acls, acls)


@pytest.fixture(scope="module")
def setup(sandbox, tmp_path_factory):
    """Topics on both clusters and the rendered ACLs granted with the admin; all removed afterwards."""
    folder = tmp_path_factory.mktemp("preflight")
    path = write_profile(sandbox, folder)
    profile = load_profile(path)
    grants = rendered(profile)
    sandbox.admin("source", admin_ops.create_topics, SOURCE_TOPICS)
    sandbox.admin("target", admin_ops.create_topics, TARGET_TOPICS)
    _heartbeats_topic(sandbox)
    for side, acls in grants.items():
        sandbox.admin(side, admin_ops.create_acls, acls)
    _wait_visible(sandbox, "source", {"preflight.a", "preflight.b"})
    _wait_visible(sandbox, "target", set(TARGET_TOPICS))
    yield {"sb": sandbox, "folder": folder, "path": path, "profile": profile, "acls": grants}
    for side, acls in grants.items():
        sandbox.admin(side, admin_ops.delete_acls, acls)
    sandbox.admin("source", admin_ops.delete_topics, list(SOURCE_TOPICS))
    sandbox.admin("target", admin_ops.delete_topics, list(TARGET_TOPICS))


def _heartbeats_topic(sb) -> None:
    """The target's heartbeats topic, as any mirror that ran there leaves it (heartbeats.TOPIC_CONFIGS), so that which
    suites ran before does not decide whether WRITE on it can be asked (a topic still to create is unverified)."""
    if heartbeats.TOPIC not in sb.admin("target", admin_ops.list_topics):
        sb.admin(
            "target",
            admin_ops.create_topics,
            {heartbeats.TOPIC: heartbeats.PARTITIONS},
            config=heartbeats.TOPIC_CONFIGS,
        )


def _wait_visible(sb, side: str, names: set[str], limit: float = 60.0) -> None:
    """New topics and ACLs reach the broker's metadata a moment after the controller accepted them."""
    deadline = time.monotonic() + limit
    while not names <= set(sb.as_mirror(side, admin_ops.list_topics)):
        assert time.monotonic() < deadline, f"the mirror does not see {sorted(names)} on {side}"
        time.sleep(0.5)


def admin_of(sb, profile):
    return admin_clusters(
        profile,
        ",".join(
            f"{side}.principal={sb.sides[side].admin_principal},{side}.keytab={sb.keytab(side, 'admin')}"
            for side in ("source", "target")
        ),
    )


# ---- a provisioned sandbox ----------------------------------------------------------------------------------
def test_provisioned_sandbox_passes_every_check_on_both_realms(setup):
    sb, profile = setup["sb"], setup["profile"]
    report = run_preflight(profile, admin=admin_of(sb, profile))
    assert not_passing(report) == set(), report.to_json()
    assert report.ok(strict=True)
    ids = {c.id for c in report.checks}
    for side in ("source", "target"):
        for what in (
            "files.keytab",
            "kerberos.keytab",
            "kerberos.initial-ticket",
            "kerberos.service-ticket",
            "tls.certificate",
            "kafka.connect",
            "kerberos.broker-tickets",
            "kafka.brokers",
            "acl.topic-describe",
            "audit.acls",
        ):
            assert f"{side}.{what}" in ids
    # two principals in two realms, each side with its own ticket, in one run
    assert "mirror/mirror.source.test@SOURCE.TEST" in report.get("source.kerberos.initial-ticket").finding
    assert "mirror/mirror.target.test@TARGET.TEST" in report.get("target.kerberos.initial-ticket").finding
    assert "kafka/kafka.target.test" in report.get("target.kerberos.service-ticket").finding
    assert report.get("source.topics.selection").details["topics"] == ["preflight.a", "preflight.b"]
    assert "pfsrc.preflight.b" in report.get("target.acl.topic-create").finding


def test_a_bootstrap_server_down_warns_naming_it_and_preflight_goes_on_through_the_others(setup, tmp_path):
    """One of two bootstrap servers has nothing listening: its name is in the warning, every other check of the side
    still runs and passes (a cluster whose broker is down for a restart is still checked)."""
    sb = setup["sb"]
    down = f"{sb.sides['source'].host}:{_closed_port()}"
    path = write_profile(sb, tmp_path, **{"source.bootstrap_servers": [down, sb.sides["source"].bootstrap]})
    report = run_preflight(load_profile(path), sides=("source",))
    assert not_passing(report) == {"source.tls.certificate"}, report.to_json()
    warned = report.get("source.tls.certificate")
    assert (warned.status, warned.details) == (WARN, {"unreached": [down]})
    assert f"the bootstrap server(s) {down} could not be reached" in warned.finding
    assert report.get("source.kafka.brokers").details["brokers"] == [
        {"node": 1, "server": sb.sides["source"].bootstrap}
    ]  # the metadata names the running broker only, and it answered on its own


def _closed_port() -> int:
    with socket.socket() as sock:  # a port just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---- ACL faults: each required ACL removed in turn, one source and one target fault per run -------------
@pytest.mark.parametrize(
    "source_op, target_op, expected",
    [
        (("READ", "TOPIC"), ("WRITE", "TOPIC"), {"source.acl.topic-read", "target.acl.topic-write"}),
        (("READ", "GROUP"), ("CREATE", "TOPIC"), {"source.acl.group-read", "target.acl.topic-create"}),
        # DESCRIBE is implied by READ (source) and WRITE (target), as Kafka's authorizer decides: nothing fails
        (("DESCRIBE", "TOPIC"), ("DESCRIBE", "TOPIC"), set()),
    ],
)
def test_each_required_acl_removed_is_named_with_its_fix(setup, source_op, target_op, expected):
    sb, profile, grants = setup["sb"], setup["profile"], setup["acls"]
    source_acl, target_acl = one(grants["source"], *source_op), one(grants["target"], *target_op)
    with acls_removed(sb, "source", [source_acl]), acls_removed(sb, "target", [target_acl]):
        report = run_preflight(profile)
    assert not_passing(report) == expected, report.to_json()
    for check_id in expected:
        check = report.get(check_id)
        side_acl = source_acl if check.side == "source" else target_acl
        assert check.acls == [side_acl]  # the rendered ACL that grants it, in render's ACL file format
        assert check.commands[0].startswith(f"kafka-acls.sh --bootstrap-server {sb.sides[check.side].bootstrap}")
        assert f"--operation {operation_word(side_acl.operation)}" in check.commands[0]
        assert "kafka-acls.sh" in check.fix


def test_deny_overrides_allow_and_the_audit_names_the_rule(setup):
    sb, profile = setup["sb"], setup["profile"]
    deny = Acl(
        principal="User:mirror", operation="READ", permission="DENY", resource_type="TOPIC", resource_name="preflight.a"
    )
    with granted(sb, "source", [deny]):
        report = run_preflight(profile, sides=("source",), admin=admin_of(sb, profile))
    assert not_passing(report) == {"source.acl.topic-read", "source.audit.topic-read"}, report.to_json()
    assert "preflight.a" in report.get("source.acl.topic-read").finding
    assert "preflight.b" not in report.get("source.acl.topic-read").finding
    audit = report.get("source.audit.topic-read")
    assert "denied by DENY READ on TOPIC LITERAL 'preflight.a' for User:mirror" in audit.finding
    assert audit.details["deny_rules"] == [deny]
    assert audit.commands[0].startswith("kafka-acls.sh") and "--remove" in audit.commands[0]
    assert "--deny-principal User:mirror" in audit.commands[0]


def test_an_admin_that_may_not_describe_acls_never_passes_the_audit(setup):
    """--as-admin with an identity that may not describe the cluster's ACLs (the mirror's own): the brokers refuse its
    DescribeAcls (CLUSTER_AUTHORIZATION_FAILED), which librdkafka hands over as an empty list; the audit says it was
    refused, from the operations the brokers report (none), and judges nothing from that list."""
    profile = setup["profile"]
    report = run_preflight(profile, sides=("source",), admin={"source": profile.source})
    audit = [c for c in report.checks if ".audit." in c.id]
    refused = acl_answers.REFUSED_FINDING.format(who="the admin identity", operations="none") + NOT_JUDGED
    assert [(c.id, c.status, c.finding) for c in audit] == [("source.audit.acls", "fail", refused)]
    assert audit[0].fix == ADMIN_FIX and not report.ok()


def test_prefixed_acl_covering_only_some_topics(setup):
    sb, profile, grants = setup["sb"], setup["profile"], setup["acls"]
    wide = one(grants["source"], "READ")
    narrow = replace(wide, resource_name="preflight.a")  # PREFIXED 'preflight.a' misses preflight.b
    with acls_removed(sb, "source", [wide]), granted(sb, "source", [narrow]):
        report = run_preflight(profile, admin=admin_of(sb, profile))
    assert not_passing(report) == {"source.acl.topic-read", "source.audit.topic-read"}, report.to_json()
    check = report.get("source.acl.topic-read")
    assert check.details["resources"] == ["preflight.b"]
    assert check.acls == [wide]
    assert "preflight.b: no ACL allows READ" in report.get("source.audit.topic-read").finding


def test_exactly_once_needs_the_transactional_id_grant(setup, tmp_path):
    """exactly_once: render grants WRITE and DESCRIBE on the prefixed transactional ids; without them pre-flight (by
    registering one id) and the audit (by the grants) name the missing grant, with them both pass."""
    sb = setup["sb"]
    profile = load_profile(write_profile(sb, tmp_path, **{"mirror.delivery": {"guarantee": "exactly_once"}}))
    ids = [a for a in rendered(profile)["target"] if a.resource_type == "TRANSACTIONAL_ID"]
    assert [(a.operation, a.resource_name, a.pattern_type) for a in ids] == [
        ("WRITE", "secure-mirror-pfsrc-pftgt-eos-", "PREFIXED"),
        ("DESCRIBE", "secure-mirror-pfsrc-pftgt-eos-", "PREFIXED"),
    ]
    report = run_preflight(profile, admin=admin_of(sb, profile))
    assert not_passing(report) == {
        "target.acl.transactional-id",
        "target.audit.transactional_id-write",
        "target.audit.transactional_id-describe",
    }, report.to_json()
    check = report.get("target.acl.transactional-id")
    assert check.acls == [ids[0]] and "--transactional-id secure-mirror-pfsrc-pftgt-eos-" in check.commands[0]
    with granted(sb, "target", [a.to_dict() for a in ids]):
        report = run_preflight(profile, admin=admin_of(sb, profile))
    assert not_passing(report) == set(), report.to_json()
    assert (
        "may use the transactional ids secure-mirror-pfsrc-pftgt-eos-*"
        in report.get("target.acl.transactional-id").finding
    )


def test_applying_the_suggested_acl_file_turns_preflight_green(setup, tmp_path):
    sb, grants = setup["sb"], setup["acls"]
    removed = {
        "source": [one(grants["source"], "READ"), one(grants["source"], "READ", "GROUP")],
        "target": [one(grants["target"], "WRITE"), one(grants["target"], "CREATE")],
    }
    for side, acls in removed.items():
        sb.admin(side, admin_ops.delete_acls, acls)
    try:
        failing = _cli(setup["path"], "--json", "--write-acls", str(tmp_path))
        assert_valid("preflight", failing.stdout)
        assert failing.returncode == 1
        assert not json.loads(failing.stdout)["ok"]
        for side in ("source", "target"):  # the file `preflight --write-acls` wrote, applied as the admin
            sb.admin(side, admin_ops.create_acls, json.loads((tmp_path / f"{side}.acls.json").read_text()))
        unproven = _cli(setup["path"], "--json")  # WRITE on pfsrc.preflight.b, still to create, cannot be asked
        assert_valid("preflight", unproven.stdout)
        assert unproven.returncode == 1 and json.loads(unproven.stdout)["unproven"] == ["target.acl.topic-write"]
        admin = ",".join(
            f"{side}.principal={sb.sides[side].admin_principal},{side}.keytab={sb.keytab(side, 'admin')}"
            for side in ("source", "target")
        )
        green = _cli(setup["path"], "--json", "--as-admin", admin)  # the audit proves it
        assert_valid("preflight", green.stdout)
        assert green.returncode == 0, green.stdout
    finally:
        for side, acls in removed.items():
            sb.admin(side, admin_ops.create_acls, acls)  # idempotent: same bindings


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "secure_mirror", "preflight", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


# ---- Kerberos faults -------------------------------------------------------------------------------------
def test_keytab_with_an_old_key_version(setup, tmp_path):
    sb = setup["sb"]
    principal, current = sb.sides["source"].mirror_principal, sb.keytab("source", "mirror")
    old, new = tmp_path / "old.keytab", tmp_path / "new.keytab"
    shutil.copy(current, old)
    sb.kdc().export_keytab(principal, new)  # the KDC moves to a new key version; `old` is now stale
    try:
        path = write_profile(sb, tmp_path, **{"source.sasl.keytab": str(old)})
        report = run_preflight(load_profile(path))
    finally:
        shutil.copy(new, current)
    assert not_passing(report) == {"source.kerberos.initial-ticket"}, report.to_json()
    check = report.get("source.kerberos.initial-ticket")
    assert check.details["kind"] == "wrong-key"
    assert "out of date" in check.finding and "ktadd" in check.fix
    assert report.get("source.kafka.connect").status == SKIPPED


def test_broker_service_principal_missing_from_the_kdc(setup):
    sb = setup["sb"]
    spn, hidden = "kafka/kafka.target.test@TARGET.TEST", "gone/kafka.target.test@TARGET.TEST"
    kdc = sb.kdc()
    kdc.kadmin("TARGET.TEST", f"renprinc -force {spn} {hidden}")  # keeps the keys the broker holds
    try:
        report = run_preflight(setup["profile"])
    finally:
        kdc.kadmin("TARGET.TEST", f"renprinc -force {hidden} {spn}")
    assert not_passing(report) == {"target.kerberos.service-ticket"}, report.to_json()
    check = report.get("target.kerberos.service-ticket")
    assert check.details["kind"] == "server-not-found"
    assert check.finding.startswith("the KDC has no principal kafka/kafka.target.test")


def test_wrong_service_name(setup, tmp_path):
    path = write_profile(setup["sb"], tmp_path, **{"source.sasl.service_name": "kafka-broker"})
    report = run_preflight(load_profile(path))
    assert not_passing(report) == {"source.kerberos.service-ticket"}, report.to_json()
    check = report.get("source.kerberos.service-ticket")
    assert "kafka-broker/kafka.source.test" in check.finding and "sasl.service_name" in check.fix


def test_kdc_stopped(setup):
    sb = setup["sb"]
    kdc = sb.kdc()
    kdc.stop()
    try:
        started = time.monotonic()
        report = run_preflight(setup["profile"])
        elapsed = time.monotonic() - started
    finally:
        kdc.start()
        sb.state["pids"]["kdc"] = kdc.pid
        sb._save()
    assert not_passing(report) == {"source.kerberos.initial-ticket", "target.kerberos.initial-ticket"}
    for side, realm in (("source", "SOURCE.TEST"), ("target", "TARGET.TEST")):
        check = report.get(f"{side}.kerberos.initial-ticket")
        assert check.details["kind"] == "kdc-unreachable"
        assert check.finding == f"no KDC of {realm} answered"
    assert elapsed < 30


# ---- TLS, selection ---------------------------------------------------------------------------------------
def test_ca_that_does_not_match(setup, tmp_path):
    sb = setup["sb"]
    path = write_profile(sb, tmp_path, **{"target.tls.ca": str(sb.wrong_ca_file)})
    report = run_preflight(load_profile(path))
    assert not_passing(report) == {"target.tls.certificate"}, report.to_json()
    check = report.get("target.tls.certificate")
    assert check.details["kind"] == "untrusted" and "tls.ca" in check.fix


def test_topic_regex_selecting_nothing(setup, tmp_path):
    path = write_profile(setup["sb"], tmp_path, **{"mirror.topics.include": "nothing\\..*"})
    report = run_preflight(load_profile(path))
    assert not_passing(report) == {"source.topics.selection"}, report.to_json()
    assert "selects none" in report.get("source.topics.selection").finding
    assert report.get("target.topics.names").status == SKIPPED


# ---- bad input: bounded time, a clear finding ---------------------------------------------------------------
@contextmanager
def silent_listener():
    """A TCP port that accepts connections and never says a word (a hung or firewalled service)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("fault, kind", [("wrong-port", "refused"), ("plaintext", "not-tls"), ("silent", "timeout")])
def test_bad_bootstrap_gives_a_clear_finding_in_bounded_time(setup, tmp_path, fault, kind):
    sb = setup["sb"]
    with silent_listener() as silent:
        port = {"wrong-port": _free_port(), "plaintext": sb.state["kdc_ports"][0], "silent": silent}[fault]
        path = write_profile(sb, tmp_path, **{"source.bootstrap_servers": [f"kafka.source.test:{port}"]})
        started = time.monotonic()
        report = run_preflight(load_profile(path), sides=("source",), timeout=1.5)
        elapsed = time.monotonic() - started
    assert not_passing(report) == {"source.tls.certificate"}, report.to_json()
    assert report.get("source.tls.certificate").details["kind"] == kind
    assert elapsed < 15


def test_cli_exit_codes_and_table(setup, tmp_path):
    ok = _cli(setup["path"], "--side", "source")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "source.acl.topic-read" in ok.stdout and "target." not in ok.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\n")
    assert _cli(bad).returncode == 2


def test_sandbox_is_back_to_green(setup):
    """Every fault above was undone: the same run passes again (the KDC, keytabs, SPNs and ACLs are restored)."""
    report = run_preflight(setup["profile"])
    assert not_passing(report) == set(), report.to_json()
