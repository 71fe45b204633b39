"""``mirror.groups`` (issue 28) in the ACL plans and everywhere they are rendered (``acls/*.acls.json``,
``apply-acls.sh``, the MANIFEST): DESCRIBE on the synced groups on the source; READ and DESCRIBE on them on the target,
READ on the target topics (the verify grant) and the offset map and checkpoints topics, LITERAL; nothing of it when
groups are off. The privilege rule refuses a GROUP grant beyond the mirror's own groups and the included ones."""

from __future__ import annotations

import json
import shlex

import pytest

from secure_mirror.kafka.acl import Acl, kafka_acls_arguments
from secure_mirror.render import acls, render_all
from secure_mirror.render.encoders import sh
from tests.support import profiles as pf

MAP, CHECKPOINTS = "secure_mirror.offset-map.src.internal", "src.checkpoints.internal"
INCLUDE = "app\\.orders,billing.*"


def acl(operation: str, resource_type: str, name: str, pattern: str = "LITERAL") -> Acl:
    return Acl(
        principal="User:mirror",
        operation=operation,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


@pytest.fixture
def synced(tmp_path):
    return pf.load(tmp_path, groups={"include": INCLUDE})


def _new(plan: acls.AclPlan, off: acls.AclPlan) -> list[Acl]:
    return [binding for binding in plan.bindings if binding not in off.bindings]


def test_the_source_may_describe_the_synced_groups(tmp_path, synced):
    off = acls.source_acls(pf.load(tmp_path / "off"))
    assert _new(acls.source_acls(synced), off) == [
        acl("DESCRIBE", "GROUP", "app.orders"),
        acl("DESCRIBE", "GROUP", "billing", "PREFIXED"),
    ]


def test_the_target_may_commit_to_the_groups_and_keep_the_group_topics(tmp_path, synced):
    off = acls.target_acls(pf.load(tmp_path / "off"))
    plan = acls.target_acls(synced)
    assert _new(plan, off) == [
        acl("READ", "GROUP", "app.orders"),
        acl("DESCRIBE", "GROUP", "app.orders"),
        acl("READ", "GROUP", "billing", "PREFIXED"),
        acl("DESCRIBE", "GROUP", "billing", "PREFIXED"),
        *(acl(op, "TOPIC", name) for name in (MAP, CHECKPOINTS) for op in ("CREATE", "DESCRIBE", "WRITE", "READ")),
    ]
    assert set(plan.own_topics) - set(off.own_topics) == {MAP, CHECKPOINTS}
    # commits need READ on the target topics: the verify grant holds it, once
    assert plan.need("READ", "TOPIC", ["src.orders.eu", "src.payments"]).acls == [
        acl("READ", "TOPIC", "src.orders", "PREFIXED"),
        acl("READ", "TOPIC", "src.payments"),
    ]


def test_without_groups_no_group_grant_and_no_group_topic(tmp_path):
    profile = pf.load(tmp_path)
    for plan in (acls.source_acls(profile), acls.target_acls(profile)):
        assert [b for b in plan.bindings if b.resource_type == "GROUP"] == [
            acl("READ", "GROUP", "secure-mirror-src-tgt-", "PREFIXED")
        ]
        assert MAP not in plan.own_topics and CHECKPOINTS not in plan.own_topics
        assert not [note for note in plan.notes if note.startswith("Groups:")]
        with pytest.raises(acls.NotPlanned):
            plan.need("DESCRIBE", "GROUP", ["app.orders"])
    with pytest.raises(acls.NotPlanned):
        acls.target_acls(profile).need("WRITE", "TOPIC", [MAP])


def test_the_samples_are_the_literals_and_a_name_under_each_prefix(synced):
    samples = acls.group_samples(synced)
    assert samples == ["app.orders", "billingsecure-mirror-preflight"]
    # a LITERAL grant on the prefix alone does not cover the prefix's sample: no false pass
    assert not acl("DESCRIBE", "GROUP", "billing").covers("GROUP", samples[1])
    assert acls.source_acls(synced).need("DESCRIBE", "GROUP", samples).acls == [
        acl("DESCRIBE", "GROUP", "app.orders"),
        acl("DESCRIBE", "GROUP", "billing", "PREFIXED"),
    ]


@pytest.mark.parametrize(
    ("binding", "why"),
    [
        (acl("READ", "GROUP", "", "PREFIXED"), "covers every group"),
        (acl("READ", "GROUP", "someone-else"), "names a group that is neither the mirror's own nor one"),
        (acl("READ", "GROUP", "app", "PREFIXED"), "names a group that is neither the mirror's own nor one"),
        (acl("READ", "GROUP", "billing"), "names a group that is neither"),  # LITERAL where the include is a prefix
    ],
)
def test_the_rule_refuses_a_group_grant_beyond_the_included_ones(synced, binding, why):
    plan = acls.target_acls(synced)
    plan.bindings.append(binding)
    assert any(why in problem for problem in acls.binding_problems(plan, synced))


def test_the_rule_refuses_the_group_topics_without_groups(tmp_path):
    profile = pf.load(tmp_path)
    plan = acls.target_acls(profile)
    plan.bindings.append(acl("WRITE", "TOPIC", MAP))
    assert acls.binding_problems(plan, profile) == [
        f"WRITE on TOPIC {MAP!r} (LITERAL) names an internal or reserved topic"
    ]


def test_rendered_in_the_acl_json_apply_script_and_manifest(tmp_path, synced):
    out = tmp_path / "out"
    render_all(synced, out)
    source = [Acl.of(item) for item in json.loads((out / "acls" / "source.acls.json").read_text())]
    target = [Acl.of(item) for item in json.loads((out / "acls" / "target.acls.json").read_text())]
    assert source == acls.source_acls(synced).bindings and target == acls.target_acls(synced).bindings
    script = (out / "acls" / "apply-acls.sh").read_text()
    for binding in [*acls.source_acls(synced).bindings, *target]:
        assert f"--add {kafka_acls_arguments(binding, sh)}\n" in script
    assert "# Groups: DESCRIBE on the consumer groups mirror.groups syncs (their committed offsets)." in script
    assert "# Groups: READ + DESCRIBE on the consumer groups mirror.groups syncs" in script
    manifest = json.loads((out / "manifest.json").read_text())
    covers = {f"{g['file']}: {line}" for g in manifest["grants"] for line in g["covers"]}
    for sentence in (
        "acls/source.acls.json: User:mirror may DESCRIBE the consumer group app.orders only",
        "acls/source.acls.json: User:mirror may DESCRIBE every consumer group whose name starts with billing",
        "acls/target.acls.json: User:mirror may READ, DESCRIBE every consumer group whose name starts with billing",
        f"acls/target.acls.json: User:mirror may CREATE, DESCRIBE, WRITE, READ the topic {MAP} only (the mirror's "
        "own internal topic: its offset map)",
        f"acls/target.acls.json: User:mirror may CREATE, DESCRIBE, WRITE, READ the topic {CHECKPOINTS} only (the "
        "mirror's own internal topic: checkpoints in MirrorMaker 2's format)",
    ):
        assert sentence in covers
    assert "the topic secure\\_mirror.offset-map.src.internal only" in (out / "MANIFEST.md").read_text()


def test_a_group_id_with_blanks_and_quotes_reaches_kafka_acls_as_one_argument(tmp_path):
    group = "team:a b'c\"d #x &y"  # no regex metacharacter: a literal group id
    profile = pf.load(tmp_path, groups={"include": group})
    render_all(profile, tmp_path / "out")
    script = (tmp_path / "out" / "acls" / "apply-acls.sh").read_text()
    lines = [line for line in script.splitlines() if "--group" in line and "Describe" in line]
    words = [shlex.split(line) for line in lines]
    assert [w[w.index("--group") + 1] for w in words] == [group, group]  # source and target
