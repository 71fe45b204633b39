"""The source: the topics the selection picks (``topics.selection``), and whether the identity may DESCRIBE them
(``acl.topic-describe``, ``acl.topic-describe-named`` for a topic named literally but hidden), READ them
(``acl.topic-read``), READ the consumer groups Spark will use (``acl.group-read``) and, with ``mirror.groups``,
DESCRIBE the synced groups (``acl.group-describe``, ``checks.groups``). ``ask`` puts every question
to the brokers through ``probes.kafka_admin``; the pure ``*_check`` functions judge the answers, and name a missing
grant as the source's ACL plan holds it (``render.acls.AclPlan.need``).

Brokers before Kafka 2.3 report no authorized operations: READ on a topic is then asked with a fetch at the end of
its first partition, READ on the group by joining a Spark-shaped group and leaving it (as strong an answer: the
broker authorizes a real Fetch and JoinGroup)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from secure_mirror.preflight.checks import groups as group_checks
from secure_mirror.preflight.checks import topic_shape as shape_checks
from secure_mirror.preflight.checks.acl_fixes import lacking
from secure_mirror.preflight.checks.base import REFUSED, UNASKED, check, listed, meaning, planned, unanswered
from secure_mirror.preflight.model import FAIL, PASS, PROVE_WITH_AUDIT, SKIPPED, UNVERIFIED, WARN, Check
from secure_mirror.preflight.probes import kafka_admin
from secure_mirror.preflight.probes.kafka_admin import groups as group_probes
from secure_mirror.preflight.probes.kafka_admin import topics as topic_probes
from secure_mirror.profile.models import Profile
from secure_mirror.profile.topics import classify
from secure_mirror.render import acls as acl_plans
from secure_mirror.render.acls import AclPlan

OLD_BROKER = (
    " (asked by fetching at the end of each topic's first partition, no record kept: the brokers, "
    "older than Kafka 2.3, report no authorized operations)"
)


def source_topics(profile: Profile, admin: kafka_admin.Admin) -> tuple[list[Check], dict[str, int]]:
    """The source's topic checks, and the selected topics with their partition counts (for the target's names)."""
    plan = acl_plans.source_acls(profile)
    answers = ask(profile, plan, admin)
    return judge(profile, plan, answers), selected_partitions(profile, answers)


# ---- asking -------------------------------------------------------------------------------------------------------
def ask(profile: Profile, plan: AclPlan, admin: kafka_admin.Admin) -> dict:
    """{"visible": name -> partitions} and, when the selection picks some of them, {"named": the literally named
    topics the identity does not see, and their descriptions; "described": the selected topics' descriptions;
    "fetched": the fetch answers of those whose operations were not reported; "configs_asked": their DescribeConfigs
    answers (config sync on); "group": ``ask_group``'s answer; "said": librdkafka's client-level errors by then, which
    name the brokers it could not ask (``kafka_admin.said``)}."""
    visible = topic_probes.list_topics(admin)
    selected = planned(plan, ("DESCRIBE", "READ"), "TOPIC", profile.selection().select(list(visible)))
    if not selected:
        return {"visible": visible}
    named = planned(plan, ("DESCRIBE",), "TOPIC", named_literals(profile, set(visible)))
    [group] = planned(plan, ("READ",), "GROUP", [acl_plans.spark_group(profile)])
    with ThreadPoolExecutor(1) as pool:  # the group's coordinator may still be loading: it is asked meanwhile
        group_described = pool.submit(group_probes.describe_group, admin, group)
        described = topic_probes.describe_topics(admin, selected)
        unasked = [t for t in selected if unreported(described[t])]
        answers = {
            "visible": visible,
            "named": {"names": named, "described": topic_probes.describe_topics(admin, named) if named else {}},
            "described": described,
            "fetched": topic_probes.fetch_probe(admin, unasked, group) if unasked else {},
            # DESCRIBE_CONFIGS asked by describing the configs (read only), with config sync on
            "configs_asked": (
                topic_probes.describe_configs_probe(admin, unasked)
                if unasked and profile.mirror.topic_shape.sync_configs
                else {}
            ),
        }
        if profile.mirror.groups.enabled:  # mirror.groups: DESCRIBE on the synced groups
            answers["synced_groups"] = group_checks.ask_source(profile, plan, admin)
        group_answer = ask_group(profile, admin, group, group_described.result())
        return {**answers, "group": group_answer, "said": kafka_admin.said(admin)}


def named_literals(profile: Profile, visible: set[str]) -> list[str]:
    """Topics the include names literally, which the selection keeps, that the identity does not see."""
    selection = profile.selection()
    named = [r.value for r in map(classify, selection.include) if r.kind == "literal" and r.value not in visible]
    return [name for name in named if selection.matches(name)]


def ask_group(
    profile: Profile, admin: kafka_admin.Admin, group: str, described: group_probes.GroupAnswer | None = None
) -> dict:
    """{"name", "described": its description (``described``: already asked)} and, when the brokers report no
    operations (before Kafka 2.3), {"joined": {"topic", "code": ``join_probe``'s answer} for the first selected
    topic, or None without one}."""
    described = group_probes.describe_group(admin, group) if described is None else described
    answer: dict[str, Any] = {"name": group, "described": described}
    if unreported(described):
        selected = profile.selection().select(sorted(topic_probes.list_topics(admin)))
        joined = (
            {"topic": selected[0], "code": group_probes.join_probe(admin, group, selected[0])} if selected else None
        )
        answer["joined"] = joined
    return answer


def unreported(described: topic_probes.Described | group_probes.GroupOperations | kafka_admin.Refused) -> bool:
    """Whether a description answered without the authorized operations (brokers before Kafka 2.3)."""
    if "error" in described:
        return False
    return described["operations"] is None


def selected_partitions(profile: Profile, answers: dict) -> dict[str, int]:
    visible, described = answers["visible"], answers.get("described", {})
    return {t: described[t].get("partitions", visible[t]) for t in profile.selection().select(list(visible))}


# ---- the judgement --------------------------------------------------------------------------------------------------
def judge(profile: Profile, plan: AclPlan, answers: dict) -> list[Check]:
    """Every source topic check from ``ask``'s answers, in the order they are reported."""
    selection = selection_check(profile, answers["visible"])
    if selection.status != PASS:
        return [selection]
    selected = profile.selection().select(list(answers["visible"]))
    named, said = answers["named"], answers.get("said", [])
    return [
        selection,
        *filter(None, [named_check(plan, named["names"], named["described"], said)]),
        *access_checks(plan, selected, answers["described"], answers["fetched"], said),
        group_check(profile, plan, answers["group"], said),
        *shape_checks.source_checks(
            profile, plan, {t: answers["described"][t] for t in selected}, answers.get("configs_asked", {})
        ),
        *(
            [group_checks.source_check(profile, plan, answers["synced_groups"], said)]
            if "synced_groups" in answers
            else []
        ),
    ]


def selection_check(profile: Profile, visible: dict[str, int]) -> Check:
    """``topics.selection``: the topics of those the identity sees that mirror.topics selects."""
    selection = profile.selection()
    selected = selection.select(list(visible))
    details = {"subscribe_pattern": selection.java_pattern(), "count": len(selected), "topics": selected[:100]}
    if selected:
        return check(
            "source",
            "topics.selection",
            PASS,
            f"{len(selected)} topic(s) selected: {listed(selected)}",
            details=details,
        )
    return check(
        "source",
        "topics.selection",
        FAIL,
        f"mirror.topics selects none of the {len(visible)} topic(s) "
        f"{profile.source.kafka_principal} can see (subscribePattern {selection.java_pattern()})",
        "fix mirror.topics.include/exclude, or grant DESCRIBE on the topics if they exist but are hidden "
        "(run pre-flight --as-admin to see every topic)",
        details=details,
    )


def named_check(
    plan: AclPlan, named: list[str], described: Mapping[str, topic_probes.TopicAnswer], said: Sequence[str] = ()
) -> Check | None:
    """``acl.topic-describe-named``: a topic the include names literally but the identity cannot see would be left
    out without a word (None: every named topic is seen); one the brokers gave no answer about is not known."""
    if not named:
        return None
    codes = {name: d["error"] for name in sorted(named) if "error" in (d := described[name])}
    hidden = [name for name, code in codes.items() if meaning(code) == REFUSED]
    unasked = {name: code for name, code in codes.items() if meaning(code) == UNASKED}
    absent = [name for name in sorted(named) if name not in hidden and name not in unasked]
    if hidden:
        finding = (
            f"mirror.topics names {listed(hidden)}, which {plan.principal} may not DESCRIBE: it would not be "
            "mirrored, silently"
        )
        return lacking(plan, "acl.topic-describe-named", plan.need("DESCRIBE", "TOPIC", hidden), finding)
    if unasked:
        question = (
            f"whether {listed(list(unasked))}, named by mirror.topics, exist(s) and {plan.principal} may DESCRIBE it"
        )
        return unanswered("source", "acl.topic-describe-named", question, unasked, said, "source.audit.topic-describe")
    return check(
        "source",
        "acl.topic-describe-named",
        WARN,
        f"mirror.topics names {listed(absent)}, which does not exist on the source (yet); it is mirrored once it exists",
        "create the topic, or fix mirror.topics.include",
    )


def access_checks(
    plan: AclPlan, selected: list[str], described: dict, fetched: dict, said: Sequence[str] = ()
) -> list[Check]:
    """``acl.topic-describe`` and ``acl.topic-read`` over the selected topics' descriptions and, where the brokers
    report no operations, the fetch answers (None: answered; ``TOPIC_AUTHORIZATION_FAILED``; ``NO_ANSWER``). A
    description refused fails DESCRIBE; one with another error (``base.meaning``) leaves both not known."""
    errors = {t: described[t]["error"] for t in selected if "error" in described[t]}
    no_describe = [t for t, code in errors.items() if meaning(code) == REFUSED]
    unasked = {t: code for t, code in errors.items() if t not in no_describe}
    if no_describe:
        finding = f"{plan.principal} may not DESCRIBE {len(no_describe)} selected topic(s): {listed(no_describe)}"
        describe = lacking(plan, "acl.topic-describe", plan.need("DESCRIBE", "TOPIC", no_describe), finding)
    elif unasked:
        question = f"whether {plan.principal} may DESCRIBE {listed(list(unasked))}"
        describe = unanswered("source", "acl.topic-describe", question, unasked, said, "source.audit.topic-describe")
    else:
        finding = f"{plan.principal} may DESCRIBE all {len(selected)} selected topic(s)"
        describe = check("source", "acl.topic-describe", PASS, finding)
    return [describe, read_check(plan, selected, described, fetched, (no_describe, unasked), said)]


def read_check(
    plan: AclPlan,
    selected: list[str],
    described: dict,
    fetched: dict,
    undescribed: tuple[list[str], dict[str, str]],
    said: Sequence[str] = (),
) -> Check:
    """``acl.topic-read`` over the described topics (``undescribed``: those refused, and those not answered about)."""
    no_describe, unasked = undescribed
    visible = [t for t in selected if "error" not in described[t]]
    how = OLD_BROKER if any(unreported(described[t]) for t in selected) else ""
    readable = {
        t for t in visible if (fetched.get(t) is None if t in fetched else "READ" in described[t]["operations"])
    }
    unread = [t for t in visible if t not in readable]
    no_read = [t for t in unread if t not in fetched or meaning(fetched[t]) == REFUSED]  # not fetched: not reported
    unfetched = [t for t in unread if t not in no_read]
    if no_read:
        finding = f"{plan.principal} may not READ {len(no_read)} of {len(selected)} topic(s): {listed(no_read)}{how}"
        return lacking(plan, "acl.topic-read", plan.need("READ", "TOPIC", no_read), finding)
    if unfetched:
        return check(
            "source",
            "acl.topic-read",
            UNVERIFIED,
            f"the brokers did not answer a fetch of {listed(unfetched)}{how}: READ is not known",
            PROVE_WITH_AUDIT,
            proven_by="source.audit.topic-read",
            details={"resources": unfetched[:100]},
        )
    if unasked:
        question = f"whether {plan.principal} may READ {listed(list(unasked))}"
        return unanswered("source", "acl.topic-read", question, unasked, said, "source.audit.topic-read")
    if no_describe:
        return check(
            "source", "acl.topic-read", SKIPPED, "skipped for topics without DESCRIBE; READ holds on the others"
        )
    return check(
        "source", "acl.topic-read", PASS, f"{plan.principal} may READ all {len(selected)} selected topic(s){how}"
    )


def group_check(profile: Profile, plan: AclPlan, answer: dict, said: Sequence[str] = ()) -> Check:
    """``acl.group-read`` from ``ask_group``'s answer about the sample of Spark's group ids: held, refused (or not
    among the operations reported), or not known when the brokers gave no answer (``said``: librdkafka's errors)."""
    group, described = answer["name"], answer["described"]
    if unreported(described):  # a broker before Kafka 2.3: the group was joined
        return joined_check(profile, plan, group, answer["joined"])
    groups = f"consumer groups named {profile.group_prefix}*"
    if "READ" in (described.get("operations") or []):
        return check("source", "acl.group-read", PASS, f"{plan.principal} may READ {groups}")
    code = described.get("error")
    if code is None or meaning(code) == REFUSED:
        finding = f"{plan.principal} may not READ the consumer groups Spark will use ({profile.group_prefix}*)"
        return lacking(plan, "acl.group-read", plan.need("READ", "GROUP", [group]), finding)
    question = f"whether {plan.principal} may READ the consumer groups Spark will use ({profile.group_prefix}*)"
    return unanswered("source", "acl.group-read", question, {group: code}, said, "source.audit.group-read")


def joined_check(profile: Profile, plan: AclPlan, group: str, joined: dict | None) -> Check:
    """``acl.group-read`` asked by joining ``group`` (``joined``: the topic and ``join_probe``'s answer)."""
    if joined is None:
        return check("source", "acl.group-read", SKIPPED, "skipped: no selected topic to join a consumer group for")
    how = (
        f" (asked by joining {group} for {joined['topic']} and leaving it: the brokers, older than Kafka 2.3, report "
        "no authorized operations)"
    )
    if joined["code"] is None:
        finding = f"{plan.principal} may READ consumer groups named {profile.group_prefix}*{how}"
        return check("source", "acl.group-read", PASS, finding)
    if meaning(joined["code"]) == REFUSED:
        finding = f"{plan.principal} may not READ the consumer groups Spark will use ({profile.group_prefix}*){how}"
        return lacking(plan, "acl.group-read", plan.need("READ", "GROUP", [group]), finding)
    return check(
        "source",
        "acl.group-read",
        UNVERIFIED,
        f"joining {group} got no answer{how}: READ on the group is not known",
        PROVE_WITH_AUDIT,
        proven_by="source.audit.group-read",
    )
