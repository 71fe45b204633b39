"""What each identity needs has one home: its ACL plan (``render.acls.AclPlan.need``). A need is held when one of
the plan's bindings covers it (or, for a topic only an unresolved include pattern selects, a LITERAL grant by name);
otherwise the plan refuses it. Pre-flight's checks and the ``--as-admin`` audit ask only through it, so any of them
asking about a need render never granted fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.checks import audit, source, target
from secure_mirror.preflight.probes.api_versions import BrokerApis
from secure_mirror.render import acls as acl_plans
from secure_mirror.render.acls import NotPlanned
from tests.support import profiles as pf
from tests.unit.preflight.conftest import acl

# the admin reads one binding, another principal's: none of the mirror's (an empty list would prove nothing)
NOT_MINE = [Acl(principal="User:other", operation="READ", resource_type="TOPIC", resource_name="unrelated")]

PACKAGE = Path(__file__).resolve().parents[3] / "secure_mirror"
TOPICS = ["orders.eu", "orders.us", "payments", "eu.sales", "us.sales", "cx.events", "other", "orders.eu.tmp"]


def test_a_need_is_granted_by_the_binding_that_covers_each_name(source_plan):
    need = source_plan.need("READ", "TOPIC", ["orders.eu", "payments", "orders.us"])
    assert need.names == ("orders.eu", "payments", "orders.us")
    assert need.grants == (
        acl("READ", "TOPIC", "orders", "PREFIXED"),
        acl("READ", "TOPIC", "payments"),
        acl("READ", "TOPIC", "orders", "PREFIXED"),
    )
    assert need.acls == [acl("READ", "TOPIC", "orders", "PREFIXED"), acl("READ", "TOPIC", "payments")]
    assert need.grant_for("payments") == acl("READ", "TOPIC", "payments")


def test_the_sample_spark_group_is_under_the_group_grant(profile, source_plan):
    group = acl_plans.spark_group(profile)
    assert group.startswith("secure-mirror-src-tgt-") and group.endswith("-driver-0")
    assert group == acl_plans.spark_group(profile)  # the same for a profile: the checks and the audit agree
    assert source_plan.need("READ", "GROUP", [group]).acls == [
        acl("READ", "GROUP", "secure-mirror-src-tgt-", "PREFIXED")
    ]


@pytest.mark.parametrize(
    ("side", "operation", "resource_type", "name"),
    [
        ("source", "READ", "TOPIC", "other"),  # not selected
        ("source", "WRITE", "TOPIC", "orders.eu"),  # not the source's operation
        ("source", "DELETE", "TOPIC", "payments"),
        ("source", "READ", "GROUP", "someone-elses-group"),
        ("target", "WRITE", "TOPIC", "orders.eu"),  # the source's name, not the target's
        ("target", "IDEMPOTENT_WRITE", "CLUSTER", "another-cluster"),
        ("target", "WRITE", "TRANSACTIONAL_ID", "secure-mirror-src-tgt-eos-x"),  # at_least_once: no transactions
    ],
)
def test_a_need_the_plan_does_not_hold_is_refused(profile, side, operation, resource_type, name):
    plan = acl_plans.source_acls(profile) if side == "source" else acl_plans.target_acls(profile)
    with pytest.raises(NotPlanned, match=f"the {side} ACL plan grants User:mirror no {operation} on {resource_type}"):
        plan.need(operation, resource_type, [name])


def test_idempotent_write_is_held_for_older_brokers_only_with_the_idempotent_producer(tmp_path):
    plan = acl_plans.target_acls(pf.load(tmp_path, delivery={"enable_idempotence": False}))
    assert plan.older_brokers == []
    with pytest.raises(NotPlanned):
        plan.need("IDEMPOTENT_WRITE", "CLUSTER", ["kafka-cluster"])


def test_a_topic_only_a_regex_selects_is_granted_by_name_on_both_sides(tmp_path):
    profile = pf.load(tmp_path, topics={"include": "(eu|us)\\.sales"})
    source_plan, target_plan = acl_plans.source_acls(profile), acl_plans.target_acls(profile)
    assert source_plan.need("READ", "TOPIC", ["eu.sales"]).acls == [acl("READ", "TOPIC", "eu.sales")]
    assert target_plan.need("WRITE", "TOPIC", ["src.us.sales"]).acls == [acl("WRITE", "TOPIC", "src.us.sales")]
    for plan, name in ((source_plan, "uk.sales"), (target_plan, "us.sales"), (target_plan, "src.uk.sales")):
        with pytest.raises(NotPlanned):
            plan.need("READ", "TOPIC", [name])
    with pytest.raises(NotPlanned):  # unresolved, but not for an operation the plan grants
        source_plan.need("WRITE", "TOPIC", ["eu.sales"])


def test_target_names_a_prefix_cannot_cover_are_granted_by_name(tmp_path):
    profile = pf.load(tmp_path, rename={"rule": "template", "template": "{topic}.copy"})
    plan = acl_plans.target_acls(profile)
    assert [u.pattern for u in plan.unresolved] == ["orders.*"]
    assert plan.need("CREATE", "TOPIC", ["orders.eu.copy", "payments.copy"]).acls == [
        acl("CREATE", "TOPIC", "orders.eu.copy"),
        acl("CREATE", "TOPIC", "payments.copy"),
    ]
    with pytest.raises(NotPlanned):
        plan.need("CREATE", "TOPIC", ["orders.eu"])


# ---- the guard: every need a check or the audit asks about, over profiles of every shape --------------------------
SHAPES = {
    "prefix and literal": {},
    "regex": {"topics": {"include": "(eu|us)\\.sales,payments"}},
    "rename after the topic": {"rename": {"rule": "template", "template": "{topic}.copy"}},
    "prefix covering reserved names": {"topics": {"include": "c.*,payments"}},
    "every topic": {"topics": {"include": ".*", "grant_all_topics": True}, "rename": {"rule": "identity"}},
    "exactly_once": {"delivery": {"guarantee": "exactly_once"}},
}


class Refusing:
    """Brokers that refuse everything (or, ``partly``, allow DESCRIBE only): every check's failing branch runs."""

    def __init__(self, monkeypatch, visible: dict[str, int], partly: bool, old: bool):
        self.visible, self.partly = visible, partly
        operations = None if old else ["DESCRIBE"]
        described = {"partitions": 1, "operations": operations}
        refused = {"error": "TOPIC_AUTHORIZATION_FAILED"}
        topics, groups = source.topic_probes, source.group_probes
        monkeypatch.setattr(topics, "list_topics", lambda a: self.visible)
        monkeypatch.setattr(
            topics, "describe_topics", lambda a, names: {n: described if partly else refused for n in names}
        )
        monkeypatch.setattr(topics, "validate_create", lambda a, t: dict.fromkeys(t, "TOPIC_AUTHORIZATION_FAILED"))
        monkeypatch.setattr(topics, "fetch_probe", lambda a, t, g: dict.fromkeys(t, "TOPIC_AUTHORIZATION_FAILED"))
        monkeypatch.setattr(
            topics, "describe_configs_probe", lambda a, t: dict.fromkeys(t, "TOPIC_AUTHORIZATION_FAILED")
        )
        group = {"operations": None} if old else {"error": "GROUP_AUTHORIZATION_FAILED"}
        monkeypatch.setattr(groups, "describe_group", lambda a, g: group)
        monkeypatch.setattr(groups, "join_probe", lambda a, g, t: "GROUP_AUTHORIZATION_FAILED")
        refused_id = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
        monkeypatch.setattr(target.transaction_probes, "transaction_probe", lambda a, i: refused_id)
        monkeypatch.setattr(target.cluster_probes, "describe_cluster", lambda a: {"operations": None if old else []})
        monkeypatch.setattr(source.kafka_admin, "Admin", lambda conf, timeout: "admin")
        monkeypatch.setattr(source.kafka_admin, "said", lambda a: [])
        monkeypatch.setattr(target, "client_conf", lambda cluster, side: {})
        monkeypatch.setattr(target.tls, "context_for", lambda settings: None)
        apis = BrokerApis({3: (0, 7 if old else 9)})
        monkeypatch.setattr(target.api_versions, "answer", lambda *a: {"apis": apis})


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize(("partly", "old"), [(False, False), (True, False), (True, True)])
def test_every_need_the_checks_and_the_audit_ask_about_is_held_by_the_plan(monkeypatch, tmp_path, shape, partly, old):
    """Fails with NotPlanned when a check or the audit asks about anything render's plan does not grant."""
    profile = pf.load(tmp_path, **SHAPES[shape])
    visible = {t: 1 for t in TOPICS}
    Refusing(monkeypatch, visible, partly, old)
    source_checks, selected = source.source_topics(profile, "admin")
    assert selected and any(c.status == "fail" for c in source_checks)
    target_checks = target.target_side(profile, 1.0, selected)
    assert {c.status for c in target_checks} & {"fail", "unverified"}
    named = [profile.target_topic(t) for t in selected]
    for side, topics in (("source", {}), ("target", {}), ("target", dict.fromkeys(named[:1], 1))):
        cluster = ("IDEMPOTENT_WRITE",) if side == "target" else ()  # as runner's cluster_operations decides
        checks = audit.audit_checks(
            profile, side, {"topics": topics, "acls": NOT_MINE, "operations": ["DESCRIBE"]}, visible, "*", cluster
        )
        assert any(c.status == "fail" and c.acls for c in checks)


def test_the_guard_bites_a_check_asking_about_a_need_the_plan_does_not_hold(monkeypatch, profile):
    """The same run, with a plan that lost its group grant: the group check and the audit refuse to name one."""
    original = acl_plans.source_acls

    def without_groups(p):
        plan = original(p)
        plan.bindings = [b for b in plan.bindings if b.resource_type != "GROUP"]
        return plan

    monkeypatch.setattr(acl_plans, "source_acls", without_groups)
    Refusing(monkeypatch, {t: 1 for t in TOPICS}, partly=True, old=False)
    with pytest.raises(NotPlanned, match="no READ on GROUP secure-mirror-src-tgt-"):
        source.source_topics(profile, "admin")
    with pytest.raises(NotPlanned, match="no READ on GROUP"):
        audit.audit_checks(
            profile, "source", {"topics": {}, "acls": NOT_MINE, "operations": ["DESCRIBE"]}, {t: 1 for t in TOPICS}, "*"
        )


# ---- one home, in the code ---------------------------------------------------------------------------------------------
def _sources(folder: Path) -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in folder.rglob("*.py")}


def test_no_check_makes_up_a_grant_of_its_own():
    """Every ACL a check or the audit names comes from a plan's Need: none is built under preflight/checks."""
    built = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path, text in _sources(PACKAGE / "preflight" / "checks").items()
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Acl"
    ]
    assert built == []


def test_the_sample_spark_group_and_the_transactional_ids_are_spelled_once():
    spelled = {
        needle: sorted(str(path.relative_to(PACKAGE)) for path, text in _sources(PACKAGE).items() if needle in text)
        for needle in ("driver-0", "spark-kafka-source", '}-0"')
    }
    assert spelled == {"driver-0": ["render/acls/job.py"], "spark-kafka-source": [], '}-0"': ["render/acls/job.py"]}
