"""The rendered Ranger policies judged by Apache Ranger's own policy engine (ranger-plugins-common's
RangerPolicyEngineImpl with the kafka service definition its jar ships, from .deps/ranger/lib), through
tests/support/RangerPolicyCases.java: one JVM for the module, fed one side's policies and access requests per batch.

Each side's answers are compared with what the side's Kafka ACL plan grants (``render/acls/``), read independently
of render/ranger.py: an access is allowed exactly when a binding of the plan (or of its ``older_brokers``, which
Ranger's authorizer needs on every version) covers the name for that operation, or for one implying it (Kafka's and
Ranger's implied DESCRIBE and DESCRIBE_CONFIGS), compared without case as Ranger's kafka service definition matches
names (``ignoreCase``; docs/ranger.md). Then what must be denied, by name: writing a source topic, an unselected topic,
Kafka's and MirrorMaker 2's internal topics, altering the cluster, another user. The same over generated profiles
(test_privilege's generator, seeded, the seed printed), and for the consumers' policies of ``acls --consumers`` over
generated source ACLs. The files themselves, without the engine: test_ranger_files.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, seed, settings
from pydantic import ValidationError

from secure_mirror import paths
from secure_mirror.errors import BadInputError
from secure_mirror.kafka.acl import CLUSTER_NAME, Acl
from secure_mirror.profile.models import Profile
from secure_mirror.render import acls, ranger
from tests.support import seeds
from tests.support.jvm_cases import JvmCases
from tests.support.profiles import ranger_profile
from tests.unit.profile.test_privilege import generated

CASES = paths.REPO_ROOT / "tests" / "support" / "RangerPolicyCases.java"
ACCESS_TYPES = [  # every access type of Ranger's kafka service definition
    "publish", "consume", "configure", "describe", "kafka_admin", "create", "delete", "idempotent_write",
    "describe_configs", "alter_configs", "cluster_action", "alter",
]  # fmt: skip
IMPLIED = {"describe": {"publish", "consume", "configure", "delete"}, "describe_configs": {"alter_configs"}}
OTHER_USER = "someone-else"


class RangerEngine(JvmCases):
    """Ranger's policy engine in one JVM: ``decide`` hands it one service's policies (a rendered file) and access
    requests, and returns its decisions, allowed or not, in order."""

    def __init__(self, log_path):
        classpath = str(paths.deps_dir() / "ranger" / "lib" / "*")
        super().__init__(CASES, classpath, log_path, "Ranger's policy engine", {"ALLOWED", "DENIED"})

    def decide(self, service: str, policy_file, asks: list[tuple[str, str, str, str]]) -> list[bool]:
        lines = [("policies", service, str(policy_file)), *(("ask", *ask) for ask in asks)]
        return [answer == "ALLOWED" for answer in self.ask(lines, len(asks))]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """Ranger's policy engine, one JVM for the module (about 3 s to start)."""
    if not (paths.deps_dir() / "ranger" / "lib").is_dir():
        pytest.fail("Ranger's jars are missing from .deps/ranger/lib: run scripts/setup")
    judge = RangerEngine(tmp_path_factory.mktemp("ranger-engine") / "stderr.log")
    yield judge
    judge.close()


# ---- what the Kafka plan grants, read without render/ranger.py -----------------------------------------------------
RESOURCE_TYPES = {
    "topic": "TOPIC",
    "consumergroup": "GROUP",
    "transactionalid": "TRANSACTIONAL_ID",
    "cluster": "CLUSTER",
}
OPERATIONS = {"consume": "READ", "publish": "WRITE", "create": "CREATE", "delete": "DELETE", "configure": "ALTER",
              "describe": "DESCRIBE", "describe_configs": "DESCRIBE_CONFIGS", "alter_configs": "ALTER_CONFIGS",
              "idempotent_write": "IDEMPOTENT_WRITE", "cluster_action": "CLUSTER_ACTION"}  # fmt: skip


def _covers(acl: Acl, resource_type: str, name: str) -> bool:
    """Kafka's resource match, without case (as Ranger's kafka service definition matches)."""
    folded = Acl(**{**acl.to_dict(), "resource_name": acl.resource_name.lower()})
    return folded.covers(resource_type, name.lower())


def granted(plan: acls.AclPlan, user: str, access: str, resource: str, name: str) -> bool:
    if user != plan.principal.removeprefix("User:"):
        return False
    accesses = {access, *IMPLIED.get(access, ())}
    return any(
        _covers(acl, RESOURCE_TYPES[resource], name)
        for acl in (*plan.bindings, *plan.older_brokers)
        if acl.operation in {OPERATIONS[a] for a in accesses if a in OPERATIONS}
    )


def samples(plan: acls.AclPlan, profile: Profile) -> dict[str, set[str]]:
    """Names per Ranger resource: each granted one (a prefix's own start and names under it), their siblings, and
    names no grant of the mirror's should cover."""
    found: dict[str, set[str]] = {"topic": set(), "consumergroup": set(), "transactionalid": set(), "cluster": set()}
    resource_of = {kind: resource for resource, kind in RESOURCE_TYPES.items()}
    for acl in (*plan.bindings, *plan.older_brokers):
        names = found[resource_of[acl.resource_type]]
        name = acl.resource_name
        names.update([name, f"{name}x", f"{name}.sample"] if acl.pattern_type == "PREFIXED" else [name])
        names.update([f"{name}-other", name[:-1]] if len(name) > 1 else [f"{name}-other"])
    source, target = profile.source.alias, profile.target.alias
    found["topic"].update(INTERNAL_TOPICS + [f"mm2-offset-syncs.{target}.internal", f"{source}.checkpoints.internal",
                                            f"mm2-configs.{source}.internal", "unselected-topic"])  # fmt: skip
    found["consumergroup"].update(["console-consumer-1", "other-group"])
    found["transactionalid"].add("other-transactional-id")
    found["cluster"].add(CLUSTER_NAME)
    return {resource: {name for name in names if name and name != "*"} for resource, names in found.items()}


INTERNAL_TOPICS = ["__consumer_offsets", "__transaction_state", "heartbeats", "connect-configs", "connect-offsets"]


def judged(engine, tmp_path, plan: acls.AclPlan, profile: Profile) -> dict[tuple[str, str, str, str], bool]:
    """Ranger's answer to every access type on every sample, for the mirror's user and another."""
    rendered = ranger.plan_policies(plan, profile)
    path = tmp_path / f"{plan.side}.policies.json"
    path.write_text(rendered.to_json(), encoding="utf-8")
    user = ranger.ranger_user(plan.principal, "test")
    asks = [
        (who, access, resource, name)
        for resource, names in samples(plan, profile).items()
        for name in sorted(names)
        for access in ACCESS_TYPES
        for who in (user, OTHER_USER)
    ]
    return dict(zip(asks, engine.decide(rendered.service, path, asks)))


def check_side(engine, tmp_path, plan: acls.AclPlan, profile: Profile) -> None:
    answers = judged(engine, tmp_path, plan, profile)
    wrong = [ask for ask, allowed in answers.items() if allowed != granted(plan, *ask)]
    assert not wrong, f"Ranger decides otherwise than the {plan.side} plan on {wrong[:8]}"
    user = plan.principal.removeprefix("User:")
    every_topic = any(a.resource_type == "TOPIC" and a.resource_name == "*" for a in plan.bindings)
    for (who, access, resource, name), allowed in answers.items():
        if not allowed:
            continue
        ask = f"{who} {access} on {resource} {name}"
        assert who == user, f"another user is allowed: {ask}"
        assert access not in ("kafka_admin", "cluster_action", "alter", "configure") or resource == "topic", ask
        assert resource != "cluster" or access == "idempotent_write", f"the cluster: {ask}"
        if plan.side == "source":
            assert access in ("consume", "describe", "describe_configs"), f"changes the source: {ask}"
        if resource == "topic" and not every_topic and name not in plan.own_topics:
            assert name not in INTERNAL_TOPICS and not name.startswith("mm2-"), f"an internal topic: {ask}"
            # MirrorMaker 2's checkpoints live on the target; on the source a user's prefix may cover the name
            # (render/acls/plan.py: excluded from mirroring, and the MANIFEST says so)
            assert plan.side == "source" or name not in profile.mm2_target_topics, f"an internal topic: {ask}"
            assert name != "unselected-topic", ask


# ---- the written cases -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "mirror",
    [
        {},
        {"delivery": {"guarantee": "exactly_once"}, "groups": {"include": "app\\..*,billing"}},
        {"topics": {"include": ".*", "grant_all_topics": True}},
    ],
    ids=["default", "exactly-once-and-groups", "grant-all-topics"],
)
def test_ranger_allows_what_the_plans_grant_and_nothing_else(engine, tmp_path, mirror):
    profile = ranger_profile(tmp_path, **mirror)
    for plan in (acls.source_acls(profile), acls.target_acls(profile)):
        check_side(engine, tmp_path, plan, profile)


def test_every_need_is_allowed_and_the_forbidden_are_denied_by_name(engine, tmp_path):
    profile = ranger_profile(tmp_path)
    source, target = acls.source_acls(profile), acls.target_acls(profile)
    src, tgt = judged(engine, tmp_path, source, profile), judged(engine, tmp_path, target, profile)
    needs = [(access, "topic", name) for access in ("consume", "describe") for name in ("payments", "orders.sample")]
    assert all(src[("mirror", *need)] for need in needs)
    assert src[("mirror", "consume", "consumergroup", f"{profile.own_groups}x")]  # Spark's groups
    assert all(tgt[("mirror", access, "topic", "src.payments")] for access in ("publish", "create", "describe"))
    assert tgt[("mirror", "idempotent_write", "cluster", CLUSTER_NAME)]  # RANGER-3809: on every Kafka version
    assert not any(src[("mirror", access, "topic", "payments")] for access in ("publish", "create", "delete"))
    assert not any(src[("mirror", "consume", "topic", name)] for name in INTERNAL_TOPICS)
    assert [name for name in INTERNAL_TOPICS if tgt[("mirror", "consume", "topic", name)]] == ["heartbeats"]  # its own
    assert not src[("mirror", "consume", "topic", "unselected-topic")]
    assert not any(tgt[("mirror", access, "cluster", CLUSTER_NAME)] for access in ("configure", "alter", "kafka_admin"))
    assert not any(tgt[(OTHER_USER, access, "topic", "src.payments")] for access in ACCESS_TYPES)


def test_ranger_matches_topic_names_without_case(engine, tmp_path):
    """Ranger's kafka service definition matches names without case: a policy on payments also covers PAYMENTS,
    which Kafka would keep apart (docs/ranger.md says so to the security team)."""
    profile = ranger_profile(tmp_path)
    plan = acls.source_acls(profile)
    rendered = ranger.plan_policies(plan, profile)
    path = tmp_path / "source.policies.json"
    path.write_text(rendered.to_json(), encoding="utf-8")
    asks = [("mirror", "consume", "topic", name) for name in ("payments", "PAYMENTS", "Orders.eu", "payment")]
    assert engine.decide(rendered.service, path, asks) == [True, True, True, False]


# ---- generated profiles --------------------------------------------------------------------------------------------
SEED = seeds.draw_seed("hypothesis @seed of the Ranger property")
print(f"test_ranger_engine: seed {SEED} (repeat with SECURE_MIRROR_SEED={SEED})", file=sys.stderr)


PROFILES = 50  # rendered profiles judged (generated ones validate refuses are drawn again)


def test_ranger_keeps_least_privilege_over_generated_profiles(engine, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", "s3cret")
    scratch = tmp_path_factory.mktemp("generated")
    outcomes = {"judged": 0, "refused by validate": 0, "refused for Ranger": 0}

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=generated(scratch))
    def check(data):
        if outcomes["judged"] >= PROFILES:
            return
        try:
            profile = Profile.model_validate(data, context={"base_dir": scratch})
        except ValidationError:  # test_privilege judges the refusals
            outcomes["refused by validate"] += 1
            return
        outcomes["judged"] += 1
        for plan in (acls.source_acls(profile), acls.target_acls(profile)):
            try:
                ranger.plan_policies(plan, profile)
            except BadInputError as refused:  # only a name Ranger would read as a pattern
                assert "which Ranger reads as a pattern and cannot escape" in str(refused), refused
                assert any(set("*?{}") & set(a.resource_name) for a in plan.bindings if a.resource_name != "*")
                outcomes["refused for Ranger"] += 1
                continue
            check_side(engine, scratch, plan, profile)

    for round_seed in range(SEED, SEED + 20):
        seed(round_seed)(check)()
        if outcomes["judged"] >= PROFILES:
            break
    print(f"test_ranger_engine: {outcomes}", file=sys.stderr)
    assert outcomes["judged"] == PROFILES, outcomes


# ---- acls --consumers: the consumers' target grants as policies ------------------------------------------------------
def test_the_consumers_policies_allow_their_reads_deny_their_denials_and_skip_what_ranger_cannot_hold(engine, tmp_path):
    from secure_mirror.render import consumer_acls

    profile = ranger_profile(tmp_path)

    def grant(principal, operation, kind, name, permission="ALLOW", pattern="LITERAL", host="*"):
        return Acl(principal=principal, host=host, operation=operation, permission=permission,
                   resource_type=kind, resource_name=name, pattern_type=pattern)  # fmt: skip

    source = [
        grant("User:alice", "READ", "TOPIC", "payments"),
        grant("User:alice", "READ", "GROUP", "billing"),
        grant("User:bob", "ALL", "TOPIC", "orders", pattern="PREFIXED"),
        grant("User:bob", "READ", "TOPIC", "orders.secret", permission="DENY"),
        grant("User:carol", "READ", "TOPIC", "payments", host="10.1.1.1"),  # a host: no Ranger spelling here
        grant("User:alice", "READ", "GROUP", "team?"),  # '?': a Ranger wildcard
        grant("User:alice", "READ", "GROUP", "tab\there"),  # no shell word can carry it: the plan skips it
    ]
    plan = consumer_acls.consumer_plan(profile, source, ["payments", "orders.eu", "orders.secret"])
    written = consumer_acls.write(plan, profile, tmp_path / "out")
    assert [p.name for p in written][2:] == ["consumer-policies.json", "apply-consumer-policies.sh"]
    script = (tmp_path / "out" / "apply-consumer-policies.sh").read_text()
    subprocess.run(["bash", "-n", str(tmp_path / "out" / "apply-consumer-policies.sh")], check=True)
    assert "/service/public/v2/api/policy/apply" in script
    assert script.count("\nmerge_policy ") == len(json.loads(written[2].read_text()))
    assert (
        "# Left out: ALLOW READ TOPIC src.payments for User:carol: acls --consumers: a grant limited to host" in script
    )
    assert "# Left out: ALLOW READ GROUP team? for User:alice: acls --consumers: the consumer group name" in script
    assert "tab" not in script
    asks = [
        ("alice", "consume", "topic", "src.payments"),
        ("alice", "describe", "topic", "src.payments"),
        ("alice", "consume", "consumergroup", "billing"),
        ("bob", "consume", "topic", "src.orders.eu"),
        ("bob", "consume", "topic", "src.orders.secret"),  # denied on the source: denied here, over bob's prefix
        ("alice", "publish", "topic", "src.payments"),
        ("carol", "consume", "topic", "src.payments"),
        ("alice", "consume", "consumergroup", "teamx"),
        ("mallory", "consume", "topic", "src.payments"),
    ]
    answers = engine.decide("cl1_kafka", written[2], asks)
    assert answers == [True, True, True, True, False, False, False, False, False]


def test_a_deny_item_also_denies_what_its_access_implies_unlike_kafka(engine, tmp_path):
    """Ranger applies implied grants to deny items: denying consume denies describe too, where Kafka's DENY READ leaves
    DESCRIBE to the allows (docs/ranger.md): a consumer denied a topic on the source cannot describe its copy either."""
    profile = ranger_profile(tmp_path)
    topic = {"principal": "User:bob", "resource_type": "TOPIC"}
    bob = [
        Acl(**topic, operation="READ", resource_name="src.orders", pattern_type="PREFIXED"),
        Acl(**topic, operation="DESCRIBE", resource_name="src.orders", pattern_type="PREFIXED"),
        Acl(**topic, operation="READ", resource_name="src.orders.secret", permission="DENY"),
    ]
    policies, skipped = ranger.consumer_policies(bob, profile)
    path = tmp_path / "consumers.json"
    path.write_text(policies.to_json(), encoding="utf-8")
    asks = [
        ("bob", access, "topic", name)
        for name in ("src.orders.secret", "src.orders.x")
        for access in ("consume", "describe")
    ]
    assert engine.decide("cl1_kafka", path, asks) == [False, False, True, True]
    assert skipped == []


# ---- generated consumer plans --------------------------------------------------------------------------------------
IMPLIES_DESCRIBE = {"consume", "publish", "configure", "delete"}


def ranger_model(bindings: list[Acl], user: str, access: str, resource: str, name: str) -> bool:
    """Kafka's allow-unless-denied over ``bindings``, with Ranger's one difference: a deny implies as an allow does."""

    def matches(acl: Acl) -> bool:
        granted = ranger.ACCESS_TYPES[acl.operation]
        implied = (access == "describe" and granted in IMPLIES_DESCRIBE) or (
            access == "describe_configs" and granted == "alter_configs"
        )
        return (
            acl.principal == f"User:{user}"
            and (granted == access or implied)
            and _covers(acl, RESOURCE_TYPES[resource], name)
        )

    mine = [acl for acl in bindings if matches(acl)]
    return any(a.permission == "ALLOW" for a in mine) and not any(a.permission == "DENY" for a in mine)


CONSUMER_TOPICS = ["payments", "orders.eu", "orders.secret", "pay.x"]


def _source_acl(rng) -> Acl:
    kind = rng.choice(["TOPIC", "TOPIC", "GROUP"])
    names = (
        ["payments", "orders.secret", "orders", "pay", "unselected"] if kind == "TOPIC" else ["billing", "app.", "a?"]
    )
    return Acl(
        principal=f"User:{rng.choice(['alice', 'bob', 'carol'])}",
        host=rng.choice(["*"] * 5 + ["10.1.1.1"]),
        operation=rng.choice(["READ", "ALL", "DESCRIBE", "WRITE"]),
        permission=rng.choice(["ALLOW"] * 4 + ["DENY"]),
        resource_type=kind,
        resource_name=rng.choice(names),
        pattern_type=rng.choice(["LITERAL", "PREFIXED"]),
    )


CONSUMER_PLANS = 50


def test_generated_consumer_plans_mean_under_ranger_what_they_mean_to_kafka(engine, tmp_path):
    from secure_mirror.render import consumer_acls

    profile = ranger_profile(tmp_path)
    rng = seeds.seeded("the generated consumer plans judged by Ranger")
    users, judged = ["alice", "bob", "carol", OTHER_USER], 0
    for round_ in range(CONSUMER_PLANS):
        source = [_source_acl(rng) for _ in range(rng.randint(1, 8))]
        plan = consumer_acls.consumer_plan(profile, source, CONSUMER_TOPICS)
        policies, _ = ranger.consumer_policies(plan.to_add, profile)
        kept = [acl for acl in plan.to_add if ranger.unrepresentable(acl, "test") is None]
        path = tmp_path / f"consumers-{round_}.json"
        path.write_text(policies.to_json(), encoding="utf-8")
        names = {"topic": [profile.target_topic(t) for t in [*CONSUMER_TOPICS, "unselected"]] + ["__consumer_offsets"]}
        names["consumergroup"] = ["billing", "app.x", "other"]
        asks = [(u, a, r, n) for u in users for r, ns in names.items() for n in ns for a in ACCESS_TYPES]
        answers = engine.decide("cl1_kafka", path, asks)
        wrong = [ask for ask, allowed in zip(asks, answers) if allowed != ranger_model(kept, *ask)]
        assert not wrong, f"plan {round_} from {source}: Ranger decides otherwise on {wrong[:6]}"
        assert not any(allowed for (u, a, _, _), allowed in zip(asks, answers) if u == OTHER_USER or a == "publish")
        judged += bool(kept)
    assert judged >= CONSUMER_PLANS // 2, judged
