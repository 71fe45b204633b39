"""``acls --consumers`` fed the answers an admin's reading gives (issue 42 part 4), no cluster: a refused DescribeAcls,
brokers without an authorizer and an empty list (an external authorizer such as Ranger's answers one) on the source
refuse the plan with the reason (exit 1, nothing on stdout), never an empty plan; on the target they leave the diff
unmade. What the answers mean is ``kafka.acl_answers.unread``'s (tests/unit/preflight/test_audit.py)."""

from __future__ import annotations

import json

import pytest

from secure_mirror import cli
from secure_mirror.commands import acls as command
from secure_mirror.kafka import client_support
from secure_mirror.kafka.acl import Acl
from tests.support import profiles as pf

KAFKAS = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
RANGER = "org.apache.ranger.authorization.kafka.authorizer.RangerKafkaAuthorizer"
READER = Acl(principal="User:alice", operation="READ", resource_type="TOPIC", resource_name="payments")


def read(acls: list[Acl], operations: list[str] | None = None, authorizer: str | None = KAFKAS, **more) -> dict:
    operations = ["ALTER", "DESCRIBE"] if operations is None else operations
    return {"topics": {"payments": 1}, "acls": acls, "operations": operations, "authorizer": authorizer, **more}


def unreported(reports_operations: bool | None) -> dict:
    """The answer of an identity with no operation on the cluster: confluent-kafka hands "none" over as None."""
    return {**read([], authorizer=None), "operations": None, "reports_operations": reports_operations}


@pytest.fixture
def consumers(tmp_path, monkeypatch, capsys):
    """``acls PROFILE --consumers --json`` over the fed answers: (exit code, stdout, stderr)."""
    profile = pf.write_profile(tmp_path, pf.profile_data(tmp_path))
    monkeypatch.setattr(client_support, "require", lambda *a, **k: None)

    def run(source: dict, target: dict) -> tuple[int, str, str]:
        monkeypatch.setattr(command, "read_both", lambda *a: {"source": source, "target": target})
        code = cli.main(["acls", str(profile), "--consumers", "--json"])
        out, err = capsys.readouterr()
        return code, out, err

    return run


REFUSED = (
    "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED): the brokers report no DESCRIBE on the cluster for the "
    "mirror's identity (its operations there: none), so no ACL was read and nothing is concluded from "
    "them; give --as-admin an identity with DESCRIBE on the source cluster (a super user or an ACL admin)"
)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (read([], operations=[]), REFUSED),
        (read([READER], operations=["ALTER"]), "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED)"),
        (read([], authorizer=""), "the brokers have no authorizer (authorizer.class.name is empty; DescribeAcls "),
        (read([], authorizer=RANGER), f"DescribeAcls answered an empty list (the brokers' authorizer: {RANGER}): "),
        (read([], operations=[], authorizer=None), "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED)"),
        (read([], authorizer=None), "DescribeAcls answered an empty list: either the cluster holds no ACL, or its "),
        (unreported(True), REFUSED),  # Kafka 2.3+ reports operations: none reported is none granted
        (unreported(None), "or the mirror's identity lacks DESCRIBE on the cluster (the brokers report no operations"),
    ],
)
def test_a_source_whose_acls_are_not_read_gives_no_plan_never_no_consumers(consumers, source, said):
    code, out, err = consumers(source, read([READER]))
    assert (code, out) == (1, "")
    assert err.startswith(
        "secure-mirror acls: no consumer access plan: the source's ACLs were not read as the mirror's identity"
    )
    assert said in err and "Traceback" not in err
    if "refused" not in said:
        assert err.rstrip().endswith(
            "grant the consumers on the target by name (where an external authorizer decides, in its policies)"
        )


@pytest.mark.parametrize(
    ("target", "said"),
    [
        (read([], operations=["ALTER"]), "DescribeAcls was refused (CLUSTER_AUTHORIZATION_FAILED)"),
        (read([], authorizer=RANGER), "DescribeAcls answered an empty list"),
        (read([], authorizer=""), "the brokers have no authorizer"),
    ],
)
def test_a_target_whose_acls_are_not_read_leaves_the_diff_unmade(consumers, target, said):
    code, out, err = consumers(read([READER]), target)
    plan = json.loads(out)
    assert (code, plan["target_acls_read"], len(plan["to_add"])) == (0, False, 2)  # READ + DESCRIBE, nothing "present"
    assert err.startswith(f"warning: the target's ACLs were not read ({said}")
    assert "every binding is listed as to add" in err


def test_acls_read_on_both_sides_make_the_plan_and_the_diff(consumers):
    code, out, err = consumers(read([READER]), read([READER]))
    plan = json.loads(out)
    assert (code, err, plan["target_acls_read"]) == (0, "", True)
    assert [b["operation"] for b in plan["to_add"]] == ["READ", "DESCRIBE"]
