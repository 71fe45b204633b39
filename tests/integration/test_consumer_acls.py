"""The consumer access plan on the real sandbox (issue 29 part 3, docs/consumer-access.md): two consumer principals of
their own (in both realms, the same short name), one allowed READ on a selected topic and its group on the source,
the other only WRITE on it. Records are produced to the target copy; ``secure-mirror acls --consumers --as-admin``
reads both clusters and writes the script and JSON; the script applied with bash (Kafka's AclCommand, as
``kafka-acls.sh`` runs it) lets the reader read the target copy in its group, while the other is refused. No Spark.

Without --as-admin the mirror's identity asks, which the brokers answer with no ACLs at all: refused (exit 1), not
an empty plan. An admin identity without DESCRIBE on the cluster (issue 42 part 4: none granted on the source, DENY
DESCRIBE on the target) gets the same from ``acls --consumers`` and from pre-flight's audit: DescribeAcls refused,
said plainly, nothing concluded. Everything it adds (principals, ACLs on both sides, topics) is removed afterwards."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight import PASS, WARN, Check, run_preflight
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile import load_profile
from secure_mirror.profile.cluster import Cluster
from secure_mirror.render import java_properties
from secure_mirror.sandbox.profile import cluster_dict
from tests.support.output_schemas import assert_valid

pytestmark = pytest.mark.sandbox

RUN = uuid.uuid4().hex[:6]
TOPIC = f"cacl{RUN}.orders"
READER, OTHER, GROUP = f"cread{RUN}", f"cother{RUN}", f"cacl{RUN}-app"
NO_DESCRIBE = f"cnodesc{RUN}"  # given as --as-admin: may not describe the cluster (so DescribeAcls is refused)
RECORDS = 5


def acl(principal: str, operation: str, resource_type: str, name: str) -> Acl:
    return Acl(principal=f"User:{principal}", operation=operation, resource_type=resource_type, resource_name=name)


SOURCE_ACLS = [
    acl(READER, "READ", "TOPIC", TOPIC),
    acl(READER, "READ", "GROUP", GROUP),
    acl(OTHER, "WRITE", "TOPIC", TOPIC),
    acl(OTHER, "READ", "GROUP", GROUP),
]


def _principals(sb) -> list[str]:
    names = (READER, OTHER, NO_DESCRIBE)
    return [f"{name}@{sb.sides[side].realm}" for name in names for side in ("source", "target")]


def _keytab(folder: Path, principal: str) -> Path:
    return folder / f"{principal.replace('@', '_')}.keytab"


def _profile(sb, folder: Path) -> Path:
    data = yaml.safe_load(sb.profile_path.read_text())
    data["mirror"]["topics"]["include"] = f"cacl{RUN}\\..*"
    path = folder / "profile.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _admin_option(sb) -> str:
    return ",".join(
        f"{side}.principal={sb.sides[side].admin_principal},{side}.keytab={sb.keytab(side, 'admin')}"
        for side in ("source", "target")
    )


def _consumer_access(sb, profile: Path) -> Check:
    """Pre-flight's audit as ``preflight PROFILE --as-admin`` runs it: its consumer access check."""
    loaded = load_profile(profile)
    report = run_preflight(loaded, admin=admin_clusters(loaded, _admin_option(sb)))
    return report.get("target.audit.consumer-access")


def _kafka_acls(sb, folder: Path) -> tuple[Path, Path]:
    """A ``kafka-acls.sh`` (Kafka's AclCommand on the sandbox's Kafka) and the target admin's client properties."""
    admin = Cluster.model_validate(cluster_dict(sb, "target", "tgt", who="admin"))
    config = folder / "admin-target.properties"
    config.write_text(
        java_properties.properties_text(java_properties.client_properties(admin, "target"), ["target admin"])
    )
    config.chmod(0o600)
    tool = folder / "kafka-acls.sh"
    java = [paths.java_executable(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
    java += [f"-Djava.security.krb5.conf={sb.krb5_conf}"]
    java += ["-cp", paths.kafka_classpath(), "org.apache.kafka.tools.AclCommand"]
    tool.write_text(f'#!/bin/sh\nexec {" ".join(map(shlex.quote, java))} "$@"\n')
    tool.chmod(0o700)
    return tool, config


def _consumer(sb, side: str, name: str, folder: Path):
    """``name@<side's realm>`` as a librdkafka identity of its own (the sandbox mirror's settings, another login)."""
    identity = sb.identity(side, "admin")
    principal = f"{name}@{sb.sides[side].realm}"
    return replace(
        identity.with_settings(
            {"sasl.kerberos.principal": principal, "sasl.kerberos.keytab": str(_keytab(folder, principal))}
        ),
        ccache=str(folder / f"{name}-{side}.ccache"),
    )


# what a reader the brokers' authorizer refuses meets first (its group, or the topic)
REFUSALS = ({"error": "GROUP_AUTHORIZATION_FAILED"}, {"error": "TOPIC_AUTHORIZATION_FAILED"})


def read_in_group(conf: dict, topic: str, group: str, count: int, timeout: float = 20.0) -> dict:
    """Subscribe in ``group``, read up to ``count`` records from the start and commit: {"records": n} or {"error": CODE}
    (the first error the consumer meets: a refused topic or group)."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **conf,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "logger": admin_ops.LOG,
        }
    )
    consumer.subscribe([topic])
    records, deadline = 0, time.monotonic() + timeout
    try:
        while records < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                return {"error": message.error().name()}
            records += 1
        if records:
            consumer.commit(asynchronous=False)
        return {"records": records}
    finally:
        consumer.close()


def prepare(conf: dict, topic: str, acls: list[Acl], records: int) -> None:
    """As a side's admin: the topic, the ACLs, and ``records`` records in it."""
    admin_ops.create_topics(conf, {topic: 1})
    admin_ops.create_acls(conf, acls)
    admin_ops.produce(conf, topic, [{"key": b"k", "value": b"v%d" % i} for i in range(records)])


def remove(conf: dict, topic: str, acls: list[Acl]) -> None:
    if acls:
        admin_ops.delete_acls(conf, acls)
    admin_ops.delete_topics(conf, [topic])


@pytest.fixture(scope="module")
def setup(sandbox, tmp_path_factory):
    folder = tmp_path_factory.mktemp("consumer-acls")
    for principal in _principals(sandbox):
        sandbox.kdc().add_principal(principal, _keytab(folder, principal))
    profile = _profile(sandbox, folder)
    target_topic = load_profile(profile).target_topic(TOPIC)
    held = [acl(READER, "DESCRIBE", "TOPIC", target_topic)]  # on the target already: the diff shows it present
    sandbox.admin("source", prepare, TOPIC, SOURCE_ACLS, 0)
    sandbox.admin("target", prepare, target_topic, held, RECORDS)
    applied = list(held)
    yield {"sb": sandbox, "folder": folder, "profile": profile, "target_topic": target_topic, "applied": applied}
    sandbox.admin("source", remove, TOPIC, SOURCE_ACLS)
    sandbox.admin("target", remove, target_topic, applied)
    for principal in _principals(sandbox):
        sandbox.kdc().delete_principal(principal)


def test_the_plan_applied_lets_the_reader_read_the_target_copy_and_refuses_the_other(setup):
    sb, folder, target_topic = setup["sb"], setup["folder"], setup["target_topic"]
    reader, other = _consumer(sb, "target", READER, folder), _consumer(sb, "target", OTHER, folder)
    argv = [sys.executable, "-m", "secure_mirror", "acls", str(setup["profile"]), "--consumers"]
    # meanwhile, without --as-admin: the mirror's identity may not describe ACLs
    unproven = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with ThreadPoolExecutor(1) as pool:  # pre-flight's audit beside the steps that change no ACL
        preflight = pool.submit(_consumer_access, sb, setup["profile"])
        before_plan = reader.call(read_in_group, target_topic, GROUP, RECORDS, 5.0)
        assert before_plan in REFUSALS, before_plan  # refused by the authorizer before the plan, not any error
        out = folder / "plan"
        done = subprocess.run(
            [*argv, "--as-admin", _admin_option(sb), "--out", str(out), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert_valid("acls", done.stdout)
        plan = json.loads(done.stdout)
        assert json.loads((out / "consumer-acls.json").read_text()) == plan
        present = [Acl.of(b) for b in plan["bindings"] if b["present"]]
        assert present == [acl(READER, "DESCRIBE", "TOPIC", target_topic)]  # the diff against the target
        to_add = [Acl.of(b) for b in plan["to_add"]]
        assert to_add == [acl(READER, "READ", "TOPIC", target_topic), acl(READER, "READ", "GROUP", GROUP)]
        assert {(s["principal"], s["operation"], s["reason"]) for s in plan["skipped"]} == {
            (f"User:{OTHER}", "WRITE", "WRITE is never copied: a consumer reads")
        }  # and OTHER's group binding is not read: OTHER reads no selected topic
        before = preflight.result(timeout=180)  # before the script: pre-flight warns of what it adds
        assert (before.status, before.acls) == (WARN, to_add), before
        setup["applied"].extend(to_add)
        tool, config = _kafka_acls(sb, folder)
        env = {**os.environ, "KAFKA_ACLS": str(tool), "TARGET_ADMIN_CONFIG": str(config)}
        applied = subprocess.run(
            ["bash", str(out / "consumer-acls.sh")], env=env, capture_output=True, text=True, timeout=180
        )
        assert applied.returncode == 0, applied.stderr
        preflight = pool.submit(_consumer_access, sb, setup["profile"])
        assert reader.call(read_in_group, target_topic, GROUP, RECORDS) == {"records": RECORDS}
        _, stderr = unproven.communicate(timeout=120)
        assert unproven.returncode == 1 and "give --as-admin an identity with DESCRIBE on the source" in stderr
        refused = other.call(read_in_group, target_topic, GROUP, RECORDS, 5.0)  # its group first: it has nothing there
        assert refused in REFUSALS, refused
        after = preflight.result(timeout=180)
        assert (after.status, after.finding) == (
            PASS,
            "the 3 binding(s) the source's consumers need after failover are on the target",
        )


# On the target, NO_DESCRIBE may alter the cluster (which implies DESCRIBE) but is denied DESCRIBE; on the source it has
# no grant at all. The brokers report no operation on the cluster to an identity without DESCRIBE there, on both.
TARGET_CLUSTER_ACLS = [
    acl(NO_DESCRIBE, "ALTER", "CLUSTER", "kafka-cluster"),
    replace(acl(NO_DESCRIBE, "DESCRIBE", "CLUSTER", "kafka-cluster"), permission="DENY"),
]


def _listed_as(sb, folder: Path, name: str) -> subprocess.Popen:
    """Kafka's AclCommand ``--list`` on the target as ``name@<target realm>``, started: its output (stdout and stderr)
    is the brokers' answer to DescribeAcls as Kafka's Java client reads it, error code kept."""
    tool, _ = _kafka_acls(sb, folder)
    principal = f"{name}@{sb.sides['target'].realm}"
    data = cluster_dict(sb, "target", "tgt", who="admin")
    data["sasl"] = {**data["sasl"], "principal": principal, "keytab": str(_keytab(folder, principal))}
    cluster = Cluster.model_validate(data)
    config = folder / f"{name}-target.properties"
    config.write_text(java_properties.properties_text(java_properties.client_properties(cluster, "target"), [name]))
    config.chmod(0o600)
    bootstrap = ",".join(cluster.bootstrap_servers)
    argv = [str(tool), "--bootstrap-server", bootstrap, "--command-config", str(config), "--list"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


REFUSED = "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED): the brokers report no DESCRIBE on the cluster for"


def test_an_admin_identity_that_may_not_describe_the_cluster_is_refused_and_nothing_is_concluded(setup):
    """``acls --consumers`` and ``preflight --as-admin``, both as NO_DESCRIBE, at once: each says DescribeAcls was
    refused on each side and concludes nothing (no plan, no audit of a need, no PASS of the audit)."""
    sb, folder, profile = setup["sb"], setup["folder"], str(setup["profile"])
    admin = ",".join(
        f"{side}.principal={NO_DESCRIBE}@{sb.sides[side].realm},"
        f"{side}.keytab={_keytab(folder, f'{NO_DESCRIBE}@{sb.sides[side].realm}')}"
        for side in ("source", "target")
    )
    cli = [sys.executable, "-m", "secure_mirror"]
    sb.admin("target", admin_ops.create_acls, TARGET_CLUSTER_ACLS)
    try:
        started = time.monotonic()
        preflight = subprocess.Popen(
            [*cli, "preflight", profile, "--as-admin", admin, "--json"], stdout=subprocess.PIPE, text=True
        )
        listed = _listed_as(sb, folder, NO_DESCRIBE)  # Kafka's Java client keeps DescribeAcls' error code
        plan = subprocess.run(
            [*cli, "acls", profile, "--consumers", "--as-admin", admin, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        out, _ = preflight.communicate(timeout=240)
        listing = listed.communicate(timeout=120)[0]
        seconds = time.monotonic() - started
    finally:
        sb.admin("target", admin_ops.delete_acls, TARGET_CLUSTER_ACLS)
    assert "ClusterAuthorizationException" in listing, listing  # the brokers' own answer: CLUSTER_AUTHORIZATION_FAILED
    assert (plan.returncode, plan.stdout) == (1, ""), plan.stderr  # no plan, not an empty one
    assert plan.stderr.startswith(
        "secure-mirror acls: no consumer access plan: the source's ACLs were not read as the admin identity: "
        f"{REFUSED} the admin identity (its operations there: none), so no ACL was read and nothing is concluded "
        "from them; give --as-admin an identity with DESCRIBE on the source cluster"
    ), plan.stderr
    assert preflight.returncode == 1
    assert_valid("preflight", out)
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    audit = {name: c for name, c in checks.items() if ".audit." in name}
    for side in ("source", "target"):
        assert (audit[f"{side}.audit.acls"]["status"], audit[f"{side}.audit.acls"]["finding"]) == (
            "fail",
            f"{REFUSED} the admin identity (its operations there: none), so no ACL was read and nothing is concluded "
            "from them; the mirror's access was not judged from them",
        )
    consumers = audit.pop("target.audit.consumer-access")
    assert consumers["status"] == "unverified" and REFUSED in consumers["finding"], consumers
    assert sorted(audit) == ["source.audit.acls", "target.audit.acls"]  # no need judged from the empty answer
    print(f"preflight and acls --consumers as an admin without DESCRIBE, at once: {seconds:.1f} s")
