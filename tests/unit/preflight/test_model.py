"""The pre-flight report: status rules, the ACL file it suggests, JSON, kafka-acls commands, the table."""

from __future__ import annotations

import json

from rich.console import Console

from secure_mirror.kafka.acl import Acl, kafka_acls_command
from secure_mirror.preflight import Check, Report, render_table

READ = Acl(
    principal="User:mirror", operation="READ", resource_type="TOPIC", resource_name="orders.", pattern_type="PREFIXED"
)


def _acl(operation: str, resource_type: str, name: str) -> Acl:
    return Acl(principal="User:mirror", operation=operation, resource_type=resource_type, resource_name=name)


def test_warnings_fail_only_when_strict():
    report = Report(
        [
            Check("source.files.keytab", "warn", "readable by others", "chmod 600 k"),
            Check("source.kafka.connect", "pass", "ok"),
            Check("target.acl.x", "skipped", "needs y"),
        ]
    )
    assert report.ok() and not report.ok(strict=True)
    report.checks.append(Check("target.acl.topic-write", "fail", "no WRITE"))
    assert not report.ok()


def test_missing_acls_are_collected_once_per_side_in_render_format():
    report = Report(
        [
            Check("source.acl.topic-read", "fail", "x", acls=[READ]),
            Check("source.audit.topic-read", "fail", "y", acls=[READ]),
            Check("source.acl.group-read", "pass", "z", acls=[_acl("READ", "GROUP", "g")]),
            Check("target.acl.topic-write", "fail", "w", acls=[_acl("WRITE", "TOPIC", "t")]),
        ]
    )
    assert report.missing_acls("source") == [READ]
    assert list(READ.to_dict()) == [
        "principal",
        "host",
        "operation",
        "permission",
        "resource_type",
        "resource_name",
        "pattern_type",
    ]  # render's acls/*.acls.json entries
    data = json.loads(report.to_json())
    assert data["ok"] is False and data["counts"]["fail"] == 3
    assert data["missing_acls"]["target"][0]["operation"] == "WRITE"
    assert data["checks"][0]["id"] == "source.acl.topic-read"


def test_kafka_acls_commands():
    assert kafka_acls_command(READ, "b:9093") == (
        "kafka-acls.sh --bootstrap-server b:9093 --command-config admin.properties --add --allow-principal "
        "User:mirror --allow-host '*' --operation Read --topic orders. --resource-pattern-type prefixed"
    )
    deny = Acl(
        principal="User:*",
        operation="DESCRIBE_CONFIGS",
        resource_type="CLUSTER",
        resource_name="kafka-cluster",
        permission="DENY",
        host="10.1.1.1",
    )
    assert kafka_acls_command(deny, "b:9093", remove=True) == (
        "kafka-acls.sh --bootstrap-server b:9093 --command-config admin.properties --remove --force "
        "--deny-principal 'User:*' --deny-host 10.1.1.1 --operation DescribeConfigs --cluster "
        "--resource-pattern-type literal"
    )


def test_table_lists_every_check_and_the_commands_of_failures():
    report = Report(
        [
            Check(
                "source.acl.topic-read",
                "fail",
                "may not READ orders",
                "grant READ",
                acls=[READ],
                commands=[kafka_acls_command(READ, "b:1")],
            ),
            Check("target.kafka.connect", "pass", "authenticated"),
        ]
    )
    console = Console(record=True, width=200)
    render_table(report, console)
    text = console.export_text()
    assert "source.acl.topic-read" in text and "target.kafka.connect" in text
    assert "FAILED: 1 pass, 0 warn, 1 fail, 0 unverified, 0 skipped" in text
    assert "--operation Read --topic orders." in text


def test_without_a_terminal_each_check_is_one_plain_line():
    report = Report(
        [
            Check("source.acl.topic-read", "fail", "may not READ orders " + "x" * 150, "grant READ"),
            Check("target.kafka.connect", "pass", "authenticated"),
        ]
    )
    console = Console(record=True, width=80, force_terminal=False)
    render_table(report, console)
    lines = console.export_text().splitlines()
    assert lines[0] == "fail       source.acl.topic-read: may not READ orders " + "x" * 150 + " -- fix: grant READ"
    assert lines[1] == "pass       target.kafka.connect: authenticated"


def test_unverified_is_not_ok_until_its_proof_passes_or_it_is_accepted():
    unverified = Check(
        "target.acl.topic-write",
        "unverified",
        "WRITE on 2 topics to create",
        "prove it",
        proven_by="target.audit.topic-write",
    )
    report = Report([Check("target.kafka.connect", "pass", "ok"), unverified])
    assert not report.ok() and report.ok(accept_unverified=True) and report.unproven() == [unverified]
    assert not report.ok(strict=True, accept_unverified=False)
    proven = Report([*report.checks, Check("target.audit.topic-write", "pass", "allowed by ...")])
    assert proven.ok() and proven.unproven() == []
    denied = Report([*report.checks, Check("target.audit.topic-write", "fail", "denied")])
    assert not denied.ok(accept_unverified=True)
    console = Console(record=True, width=200, force_terminal=False)
    render_table(report, console)
    text = console.export_text()
    assert "UNVERIFIED: 1 pass, 0 warn, 0 fail, 1 unverified, 0 skipped" in text
    assert "not proven: target.acl.topic-write: prove it" in text


def test_passed_is_a_pass_of_that_very_check():
    report = Report([Check("source.kafka.connect", "pass", "ok"), Check("target.kafka.connect", "warn", "weak")])
    assert report.passed("source.kafka.connect")
    assert not report.passed("target.kafka.connect") and not report.passed("source.java.client")
