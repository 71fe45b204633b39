"""The rendered Ranger files without Ranger's engine (render/ranger.py, docs/ranger.md): the policies' shape and names,
the names Ranger would read as a pattern refused (by validate for a synced group, by render for any other way in),
which sides get which files, and ranger/apply-policies.sh run by bash against a curl that answers as Ranger Admin's
REST API v2 would (GET by service and name, then PUT or POST). Ranger's own engine judges the policies in
test_ranger_engine.py."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from secure_mirror.errors import BadInputError
from secure_mirror.kafka.acl import Acl
from secure_mirror.render import acls, ranger
from tests.support.profiles import load, password, profile_data, ranger_profile, write_profile


# ---- the rendered files ------------------------------------------------------------------------------------------
def test_policies_are_in_rangers_shape_and_say_whose_they_are(tmp_path):
    profile = ranger_profile(tmp_path)
    rendered = ranger.plan_policies(acls.target_acls(profile), profile)
    policies = json.loads(rendered.to_json())
    assert {p["service"] for p in policies} == {"cl1_kafka"}
    names = [p["name"] for p in policies]
    assert len(set(names)) == len(names)
    assert all(name.startswith("secure-mirror-src-tgt target ") for name in names)
    assert all(p["policyLabels"] == ["secure-mirror", "secure-mirror-src-tgt"] for p in policies)
    payments = next(p for p in policies if p["resources"] == {
        "topic": {"values": ["src.payments"], "isExcludes": False, "isRecursive": False}})  # fmt: skip
    assert payments["policyItems"][0]["users"] == ["mirror"]
    cluster = next(p for p in policies if "cluster" in p["resources"])
    assert cluster["policyItems"][0]["accesses"] == [{"type": "idempotent_write", "isAllowed": True}]


@pytest.mark.parametrize("group", ["ap?x", "team-{USER}"])
def test_a_group_name_ranger_reads_as_a_pattern_is_refused(tmp_path, group):
    """validate refuses '*' in a group name already (Kafka's own wildcard); '?' and Ranger's macros are Ranger's."""
    acl = Acl(principal="User:alice", operation="READ", resource_type="GROUP", resource_name=group)
    with pytest.raises(BadInputError) as refused:
        ranger.policies_of([acl], service="kafka", owner="m", side="target", alias="tgt", field="target.acls.format")
    assert str(refused.value).startswith(f"target.acls.format: the consumer group name {group!r} contains")
    assert "which Ranger reads as a pattern and cannot escape" in str(refused.value)


def test_an_empty_prefix_is_never_a_lone_star(tmp_path):
    acl = Acl(
        principal="User:alice", operation="READ", resource_type="GROUP", resource_name="", pattern_type="PREFIXED"
    )
    assert (
        ranger.unrepresentable(acl, "acls --consumers")
        == "acls --consumers: a PREFIXED grant on '' has no Ranger value"
    )


def test_validate_refuses_a_synced_group_ranger_reads_as_a_pattern_and_kafka_mode_keeps_it(tmp_path, capsys):
    from secure_mirror.cli import main

    data = profile_data(tmp_path, groups={"include": "app\\?,billing"})
    assert main(["validate", str(write_profile(tmp_path, data))]) == 0  # Kafka's ACLs name it as it is
    data["target"]["acls"] = {"format": "ranger"}
    capsys.readouterr()
    assert main(["render", str(write_profile(tmp_path, data)), "--out", str(tmp_path / "out")]) == 2
    assert (
        "mirror.groups.include: the group 'app?' contains '?' (a wildcard), which Ranger reads as a pattern and cannot "
        "escape (target.acls.format names ranger); leave the group out, or use Kafka's ACLs for that side"
    ) in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_render_writes_the_ranger_files_only_for_the_sides_that_ask(tmp_path):
    from secure_mirror.render.tree import render_files

    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["target"]["acls"] = {"format": "ranger"}
    profile = load(tmp_path, data["source"], data["target"])
    paths_ = [f.path for f in render_files(profile, tmp_path / "out")]
    assert [p for p in paths_ if p.startswith("ranger/")] == ["ranger/target.policies.json", "ranger/apply-policies.sh"]
    assert "acls/apply-acls.sh" in paths_  # the source's brokers still take Kafka's ACLs
    plain = load(tmp_path / "plain")
    assert not [f for f in render_files(plain, tmp_path / "out2") if f.path.startswith("ranger/")]
    data["source"]["acls"] = {"format": "ranger"}
    both = load(tmp_path, data["source"], data["target"])
    paths_ = [f.path for f in render_files(both, tmp_path / "out3")]
    assert "acls/apply-acls.sh" not in paths_ and "acls/source.acls.json" in paths_  # the plan of record stays


# ---- apply-policies.sh, against a curl that answers as Ranger Admin would --------------------------------------------
FAKE_CURL = """#!/usr/bin/env bash
printf '%s\\n' "$*" >> "$CALLS"
case "$*" in
  *"-w %{http_code}"*"policy/secure-mirror-src-tgt%20target%20topic%20src.payments") printf 200 ;;
  *"-w %{http_code}"*) printf 404 ;;
esac
"""


def test_apply_script_creates_or_replaces_each_policy_by_service_and_name(tmp_path):
    from secure_mirror.render.tree import render_files

    profile = ranger_profile(tmp_path)
    script = next(f for f in render_files(profile, tmp_path / "out") if f.path == "ranger/apply-policies.sh")
    (tmp_path / "apply.sh").write_text(script.content)
    (tmp_path / "curl").write_text(FAKE_CURL)
    (tmp_path / "curl").chmod(0o755)
    env = {"PATH": os.environ["PATH"], "CALLS": str(tmp_path / "calls"), "CURL": str(tmp_path / "curl")}
    env |= {"SOURCE_RANGER_URL": "https://ranger.source.test:6182", "TARGET_RANGER_URL": "https://r.target.test"}
    env |= {"TARGET_RANGER_NETRC": str(tmp_path / "netrc")}
    done = subprocess.run(["bash", str(tmp_path / "apply.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    policies = ranger.plan_policies(acls.source_acls(profile), profile).policies
    policies += ranger.plan_policies(acls.target_acls(profile), profile).policies
    assert len(calls) == 2 * len(policies)  # one look-up and one write each
    assert "replaced: secure-mirror-src-tgt target topic src.payments" in done.stdout.splitlines()
    assert done.stdout.count("created: ") == len(policies) - 1
    posted = [call for call in calls if "-X POST" in call]
    assert all(call.endswith("https://ranger.source.test:6182/service/public/v2/api/policy") for call in posted[:3])
    assert all("--negotiate -u :" in call for call in calls if "ranger.source.test" in call)
    assert all(f"--netrc-file {tmp_path / 'netrc'}" in call for call in calls if "r.target.test" in call)
    body = json.loads(posted[0].split("--data-binary ", 1)[1].rsplit(" https://", 1)[0])
    assert body == policies[0]  # the file's policy, its service the profile's
    assert '"service":"cl1_kafka"' in next(call for call in calls if "-X PUT" in call)


def test_apply_script_refuses_a_service_name_that_is_not_a_name(tmp_path):
    from secure_mirror.render.tree import render_files

    profile = ranger_profile(tmp_path)
    script = next(f for f in render_files(profile, tmp_path / "out") if f.path == "ranger/apply-policies.sh")
    (tmp_path / "apply.sh").write_text(script.content)
    env = {
        "PATH": os.environ["PATH"],
        "SOURCE_RANGER_URL": "https://r",
        "SOURCE_RANGER_SERVICE": 'x","isEnabled":false',
    }
    done = subprocess.run(["bash", str(tmp_path / "apply.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "SOURCE_RANGER_SERVICE: a Ranger service name is letters, digits" in done.stderr


@pytest.mark.parametrize("name", ["secure-mirror-src-tgt target topic src.orders*", "grüppe/ä?b#c%d+e", "a'b\"c$(d)"])
def test_the_scripts_path_segment_is_what_a_url_quoting_gives(tmp_path, name):
    from urllib.parse import quote

    from secure_mirror.render.tree import render_files

    script = next(
        f for f in render_files(ranger_profile(tmp_path), tmp_path / "out") if f.path == "ranger/apply-policies.sh"
    )
    function = script.content[script.content.index("urlencode() {") : script.content.index("\n}\n") + 3]
    done = subprocess.run(["bash", "-c", function + 'urlencode "$1"', "-", name], capture_output=True, text=True)
    assert done.stdout == quote(name, safe="-._~")
