"""apply-acls.sh, the script a security team runs, applied live: bash runs the rendered script as written, its every
``kafka-acls.sh`` call going to Kafka's own AclCommand (the JVM tool that ``kafka-acls.sh`` starts) with an admin's
client properties, against the sandbox's brokers. Then the brokers' ACLs are read back with confluent-kafka's
DescribeAcls, a reader nobody here wrote, and compared with the plan render wrote beside the script
(``acls/<side>.acls.json``) and with render's ACL model (``render/acls/``, the plan pre-flight asks through): the same
bindings, no more and no fewer.

The profile asks for every kind of grant the script can hold: exactly_once (WRITE + DESCRIBE on the transactional
ids), ``mirror.groups`` with a literal group and a prefix (DESCRIBE on the source, READ + DESCRIBE on the target, the
offset map and checkpoints topics), ``mirror.topic_shape`` (DESCRIBE_CONFIGS on the source topics, ALTER_CONFIGS and
ALTER on the target's), the heartbeats topic and a literal and a prefixed topic selection. Its principal
(``sasl.kafka_principal``) is the module's own, so what the brokers hold for it is this test's alone; the bindings
are removed at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter

import pytest
import yaml

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.profile import load_profile
from secure_mirror.render import acls as render_acls
from secure_mirror.render import render_all
from tests.support.acl_reader import acls_of
from tests.support.cluster import unique

pytestmark = [pytest.mark.sandbox, pytest.mark.jvm]
SIDES = ("source", "target")
# Kafka's bin/kafka-acls.sh is `exec kafka-run-class.sh org.apache.kafka.tools.AclCommand "$@"`; this one starts the
# same class from .deps's Kafka, with $KAFKA_OPTS as kafka-run-class.sh passes them.
KAFKA_ACLS = """#!/bin/sh
exec "$JAVA" $KAFKA_OPTS -cp "$KAFKA_CLASSPATH" org.apache.kafka.tools.AclCommand "$@"
"""
QUICK_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"]  # each call is a short JVM


def _admin_properties(sandbox, side: str) -> str:
    """The side's admin (a super user) as a Java client: its keytab by path, no secret in the file."""
    principal = sandbox.sides[side].admin_principal
    return "\n".join(
        [
            "security.protocol=SASL_SSL",
            "sasl.mechanism=GSSAPI",
            "sasl.kerberos.service.name=kafka",
            'sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab="true" '
            f'storeKey="true" useTicketCache="false" keyTab="{sandbox.keytab(side, "admin")}" principal="{principal}";',
            "ssl.truststore.type=PEM",
            f"ssl.truststore.location={sandbox.ca_file}",
            "",
        ]
    )


def _class_archive(sandbox, env: dict[str, str], folder, principal: str) -> str:
    """AclCommand's classes dumped once (a JDK class-data archive): each call of the script then starts in about a
    second. The dump is AclCommand listing the principal's ACLs on the source (none yet)."""
    archive = folder / "aclcommand.jsa"
    argv = [
        env["JAVA"],
        *env["KAFKA_OPTS"].split(),
        f"-XX:ArchiveClassesAtExit={archive}",
        "-cp",
        env["KAFKA_CLASSPATH"],
    ]
    argv += ["org.apache.kafka.tools.AclCommand", "--bootstrap-server", sandbox.sides["source"].bootstrap]
    argv += ["--command-config", env["SOURCE_ADMIN_CONFIG"], "--list", "--principal", principal]
    listed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and archive.exists(), listed.stderr[-3000:]
    return str(archive)


def _profile(sandbox, folder, principal: str):
    data = yaml.safe_load(sandbox.profile_path.read_text())
    for side in SIDES:
        data[side]["sasl"]["kafka_principal"] = principal
    data["source"]["alias"], data["target"]["alias"] = "aclsrc", "acltgt"
    data["mirror"]["topics"]["include"] = "acl\\.orders\\..*,acl-audit"  # a prefix and a literal name
    data["mirror"]["delivery"] = {"guarantee": "exactly_once"}
    data["mirror"]["groups"] = {"include": "acl-app\\.billing,acl-team-.*"}  # a literal group and a prefix
    data["mirror"]["topic_shape"] = {"sync_configs": True, "grow_partitions": True}
    data["mirror"]["checkpoint_location"] = str(folder / "checkpoint")
    (folder / "profile.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return load_profile(folder / "profile.yaml")


@pytest.fixture(scope="module")
def applied(sandbox, tmp_path_factory):
    folder = tmp_path_factory.mktemp("apply-acls")
    principal = f"User:{unique('apply-acls')}"
    profile = _profile(sandbox, folder, principal)
    out = folder / "out"
    render_all(profile, out)
    plans = {side: json.loads((out / "acls" / f"{side}.acls.json").read_text()) for side in SIDES}
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "kafka-acls.sh").write_text(KAFKA_ACLS)
    (bin_dir / "kafka-acls.sh").chmod(0o755)
    options = [f"-Djava.security.krb5.conf={sandbox.krb5_conf}", *QUICK_JVM]
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(folder), "JAVA": paths.java_executable()}
    env |= {"KAFKA_CLASSPATH": paths.kafka_classpath(), "KAFKA_OPTS": " ".join(options)}
    for side in SIDES:
        config = folder / f"admin-{side}.properties"
        config.write_text(_admin_properties(sandbox, side))
        env[f"{side.upper()}_ADMIN_CONFIG"] = str(config)
    env["KAFKA_OPTS"] += " -XX:SharedArchiveFile=" + _class_archive(sandbox, env, folder, principal)
    try:
        run = subprocess.run(
            ["bash", str(out / "acls" / "apply-acls.sh")], env=env, capture_output=True, text=True, timeout=900
        )
        held = {side: sandbox.admin(side, acls_of, principal) for side in SIDES}
        yield {"profile": profile, "principal": principal, "plans": plans, "run": run, "held": held}
    finally:
        for side in SIDES:  # whatever the script or the test left, this principal's alone
            sandbox.admin(side, admin_ops.delete_acls, plans[side] + sandbox.admin(side, acls_of, principal))


def _bindings(entries: list[dict]) -> Counter:
    return Counter(Acl.of(entry) for entry in entries)


def test_the_script_runs_every_grant_through_kafkas_aclcommand(applied):
    run = applied["run"]
    assert run.returncode == 0, run.stderr[-3000:]
    planned, added = sum(len(plan) for plan in applied["plans"].values()), run.stdout.count("Adding ACLs for resource")
    assert added == planned, f"AclCommand added {added} bindings, the plan has {planned}"  # AclCommand's own words


@pytest.mark.parametrize("side", SIDES)
def test_the_brokers_hold_exactly_the_rendered_plan(applied, side):
    held, planned = _bindings(applied["held"][side]), _bindings(applied["plans"][side])
    missing, extra = sorted(map(str, planned - held)), sorted(map(str, held - planned))
    assert (missing, extra) == ([], []), f"{side}: missing {missing}; not planned {extra}"
    assert set(held.values()) == {1}
    model = render_acls.source_acls if side == "source" else render_acls.target_acls
    assert Counter(model(applied["profile"]).bindings) == held  # render's ACL model, as the MANIFEST and acls show


def test_the_plan_holds_every_kind_of_grant_the_profile_asks_for(applied):
    """What the comparison above covers: the exactly_once, groups and topic-shape grants among the bindings."""
    kinds = {
        side: {(a.resource_type, a.pattern_type, a.operation) for a in _bindings(applied["held"][side])}
        for side in SIDES
    }
    assert {("TOPIC", "PREFIXED", "DESCRIBE_CONFIGS"), ("TOPIC", "LITERAL", "DESCRIBE_CONFIGS")} <= kinds["source"]
    assert {("GROUP", "LITERAL", "DESCRIBE"), ("GROUP", "PREFIXED", "DESCRIBE")} <= kinds["source"]
    assert {("TRANSACTIONAL_ID", "PREFIXED", "WRITE"), ("TRANSACTIONAL_ID", "PREFIXED", "DESCRIBE")} <= kinds["target"]
    assert {("TOPIC", "PREFIXED", "ALTER_CONFIGS"), ("TOPIC", "PREFIXED", "ALTER")} <= kinds["target"]
    assert {("GROUP", "LITERAL", "READ"), ("GROUP", "PREFIXED", "DESCRIBE")} <= kinds["target"]
    own = {a.resource_name for a in _bindings(applied["held"]["target"]) if a.resource_name.endswith(".internal")}
    assert own == {"aclsrc.checkpoints.internal", "secure_mirror.offset-map.aclsrc.internal"}
    assert {a.principal for side in SIDES for a in _bindings(applied["held"][side])} == {applied["principal"]}
