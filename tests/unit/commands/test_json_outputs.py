"""Every command's --json prints the shape committed in schema/ (generated from the models of commands/outputs.py).
What each command prints is judged by a JSON Schema validator against the committed file (tests/support/
output_schemas.py: jsonschema, the schemas read closed), not by the models that generate it: each command runs from
main(), its clusters' answers given in place of the servers (lag, verify, preflight, acls, groups, run), and what it
prints is validated; run --json's lines are also tested in tests/unit/run/test_json_lines.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secure_mirror.cli import main
from secure_mirror.commands import outputs
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.model import Check, Report
from secure_mirror.preflight.table import report_output
from secure_mirror.profile import load_profile
from secure_mirror.render.consumer_acls import ConsumerPlan, consumer_plan
from secure_mirror.run.heartbeats import HeartbeatState
from secure_mirror.run.lag import LagRow
from secure_mirror.verify.compare import Comparison, VerifyResult
from tests.support.output_schemas import assert_valid, assert_valid_lines, problems
from tests.support.profiles import profile_data, write_profile

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("name", sorted(outputs.SHAPES))
def test_committed_output_schemas_are_generated(name):
    committed = (REPO / "schema" / f"{name}-output.schema.json").read_text()
    assert committed == outputs.schema_text(name), (
        f"regenerate: secure-mirror schema --of {name} > schema/{name}-output.schema.json"
    )


def test_validate_json_summarises_a_good_profile(tmp_path, capsys):
    assert main(["validate", "--json", str(write_profile(tmp_path, profile_data(tmp_path)))]) == 0
    printed = capsys.readouterr().out
    assert_valid("validate", printed)
    result = outputs.ValidateOutput.model_validate_json(printed)
    assert (result.ok, result.problems, result.rename) == (True, [], "alias_prefix")
    assert result.source == outputs.SideSummary(
        alias="src", security_protocol="SASL_SSL", mechanism="GSSAPI", principal="User:mirror"
    )


def test_validate_json_lists_every_problem_with_exit_2(tmp_path, capsys):
    data = profile_data(tmp_path)
    data["source"]["sasl"]["kafka_principal"] = "User:*"
    data["target"]["sasl"]["kafka_principal"] = "User:a*"
    assert main(["validate", "--json", str(write_profile(tmp_path, data))]) == 2
    result = json.loads(capsys.readouterr().out)
    assert_valid("validate", result)
    assert result["ok"] is False and len(result["problems"]) == 2
    assert result["problems"][0].startswith("source.sasl.kafka_principal: the principal holds '*'")


def test_validate_json_strict_turns_warnings_into_problems(tmp_path, capsys):
    data = profile_data(tmp_path)
    data["mirror"]["topics"] = {"include": ".*", "grant_all_topics": True}
    path = str(write_profile(tmp_path, data))
    assert main(["validate", "--json", path]) == 0
    printed = capsys.readouterr().out
    assert_valid("validate", printed)
    [warning] = json.loads(printed)["warnings"]
    assert warning["field"] == "mirror.topics.grant_all_topics"
    assert main(["validate", "--json", "--strict", path]) == 2
    printed = capsys.readouterr().out
    assert_valid("validate", printed)
    assert json.loads(printed)["problems"][0].startswith("mirror.topics.grant_all_topics: ")


def test_render_json_lists_the_files_written(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["render", "--json", str(write_profile(tmp_path, profile_data(tmp_path))), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert_valid("render", printed)
    result = outputs.RenderOutput.model_validate_json(printed)
    assert result.out == str(out)
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert {entry.path for entry in result.files} == written
    assert all(entry.mode == f"{(out / entry.path).stat().st_mode & 0o777:04o}" for entry in result.files)


def _beat(newest_ms: int | None) -> HeartbeatState:
    return HeartbeatState("src", "tgt", newest_ms, now_ms=100_000, stale_after_seconds=60)


def test_lag_json_has_the_rows_and_the_heartbeat():
    rows = [LagRow("mirror", "a", 0, 10, 12, 2), LagRow("mirror", "gone", 0, 5, None, None)]
    text = outputs.dump(outputs.lag_output(rows, _beat(None)))
    assert_valid("lag", text)
    result = outputs.LagOutput.model_validate_json(text)
    assert [row.model_dump() for row in result.partitions] == [row.to_dict() for row in rows]
    beat = json.loads(text)["heartbeat"]
    assert (beat["newest-ms"], beat["stale"], beat["stale-after-seconds"]) == (None, True, 60)
    assert json.loads(outputs.dump(outputs.lag_output([], None)))["heartbeat"] is None  # heartbeats off


def test_verify_json_is_the_results_dict_with_its_heartbeat():
    example = {"kind": "missing", "times": 1, "topic": "t", "partition": 0, "offset": 20}
    example |= {"key": "late", "value": None, "headers": [["h", "0x00ff"]]}
    differs = Comparison("t", 0, "src.t", 21, 20, "01", "02", missing=1, examples=[example])
    result = VerifyResult([differs, Comparison("t", None, "src.t", 3, 3, "0a", "0a")], [], 4, _beat(99_000))
    text = outputs.dump(outputs.verify_output(result))
    assert_valid("verify", text)
    assert outputs.VerifyOutput.model_validate_json(text).ok is False
    assert json.loads(text) == {**result.to_dict(), "heartbeat": result.heartbeat.to_dict()}  # the shape of before
    result.heartbeat = None
    assert json.loads(outputs.dump(outputs.verify_output(result)))["heartbeat"] is None  # was: no key


def test_doctor_json(capsys):
    code = main(["doctor", "--json"])
    printed = capsys.readouterr().out
    assert_valid("doctor", printed)
    result = outputs.DoctorOutput.model_validate_json(printed)
    assert result.items and result.ready == all(item.ok for item in result.items if item.required)
    assert code == (0 if result.ready else 4)


def test_preflight_json_is_the_reports_dict():
    acl = Acl(principal="User:mirror", operation="READ", resource_type="TOPIC", resource_name="t")
    report = Report(
        [
            Check("source.acl.topic-read", "fail", "no READ on t", "grant it", [acl], ["kafka-acls --add ..."]),
            Check("target.acl.topic-write", "unverified", "not there yet", proven_by="target.audit.topic-write"),
            Check("source.kerberos.initial-ticket", "pass", "a ticket", details={"lifetime": 36000}),
        ],
        {"source": 1.5},
    )
    text = outputs.dump(report_output(report))
    assert_valid("preflight", text)
    assert outputs.PreflightOutput.model_validate_json(text).unproven == ["target.acl.topic-write"]
    assert json.loads(text) == report.to_dict()


def _consumer_plan(tmp_path, target: list[Acl] | None) -> ConsumerPlan:
    reader = Acl(principal="User:app", operation="READ", resource_type="TOPIC", resource_name="payments")
    group = Acl(principal="User:app", operation="READ", resource_type="GROUP", resource_name="app")
    writer = Acl(principal="User:app", operation="WRITE", resource_type="TOPIC", resource_name="payments")
    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path)))
    return consumer_plan(profile, [reader, group, writer], ["payments"], target)


@pytest.mark.parametrize("target_read", [True, False])
def test_acls_json_is_the_plan_in_its_committed_schema(tmp_path, target_read):
    """``acls --consumers --json`` prints ``plan.to_json()``: the shape of schema/acls-output.schema.json, with and
    without the target's ACLs read (``present`` null)."""
    plan = _consumer_plan(tmp_path, [] if target_read else None)
    text = plan.to_json()
    assert_valid("acls", text)
    result = outputs.SHAPES["acls"].model_validate_json(text)
    assert json.loads(text) == result.model_dump(by_alias=True)
    schema = json.loads((REPO / "schema" / "acls-output.schema.json").read_text())
    data = json.loads(text)
    assert set(data) == set(schema["properties"]) == set(schema["required"])
    assert {b["present"] for b in data["bindings"]} == ({False} if target_read else {None})
    assert data["target_acls_read"] is target_read and data["skipped"][0]["operation"] == "WRITE"
    assert {(b["operation"], b["resource_type"]) for b in data["to_add"]} >= {("READ", "TOPIC"), ("READ", "GROUP")}


# ---- each command from main(), its clusters' answers in place of the servers, what it prints validated ------------
def _profile(tmp_path, **mirror) -> str:
    data = profile_data(tmp_path)
    data["mirror"].update(mirror)
    return str(write_profile(tmp_path, data))


def test_the_schemas_are_json_schemas_read_closed():
    """Every committed schema is a valid Draft 2020-12 schema; read closed, a field it does not name is refused, as
    a named field of another type is."""
    assert problems("lag", {"partitions": [], "heartbeat": None}) == []
    assert problems("lag", {"partitions": [], "heartbeat": None, "extra": 1}) == [
        "(top): Additional properties are not allowed ('extra' was unexpected)"
    ]
    assert problems("lag", {"partitions": "none", "heartbeat": None}) == ["partitions: 'none' is not of type 'array'"]
    assert all(problems(name, {}) for name in outputs.SHAPES)  # each validator is built, and {} is no output


def test_lag_json_from_main(tmp_path, capsys, monkeypatch):
    rows = [LagRow("mirror", "a", 0, 10, 12, 2), LagRow("mirror", "gone", 0, 5, None, None)]
    monkeypatch.setattr("secure_mirror.commands.lag.lag", lambda profile, identities: rows)
    for beat in (_beat(99_000), None):
        monkeypatch.setattr("secure_mirror.commands.lag.lag_heartbeat", lambda profile, identities, beat=beat: beat)
        assert main(["lag", "--json", _profile(tmp_path)]) == 0
        assert_valid("lag", capsys.readouterr().out)


def test_verify_json_from_main(tmp_path, capsys, monkeypatch):
    example = {"kind": "extra", "times": 2, "topic": "t", "partition": 1, "offset": 3, "key": None, "value": "0x00"}
    differs = Comparison("t", 1, "src.t", 4, 5, "01", "02", extra=1, examples=[{**example, "headers": []}])
    pending = [{"topic": "t", "partition": 2, "records": 7}]
    counts = [{"topic": "t", "target_topic": "src.t", "finding": "3 partitions, the source 4", "fix": "add one"}]
    result = VerifyResult([differs], pending, 4, None, counts)
    monkeypatch.setattr("secure_mirror.commands.verify.verify", lambda profile: result)
    assert main(["verify", "--json", _profile(tmp_path)]) == 1
    assert_valid("verify", capsys.readouterr().out)


def _report() -> Report:
    acl = Acl(principal="User:mirror", operation="READ", resource_type="TOPIC", resource_name="t")
    return Report(
        [
            Check("source.acl.topic-read", "fail", "no READ on t", "grant it", [acl], ["kafka-acls --add ..."]),
            Check("target.acl.topic-write", "unverified", "not there yet", proven_by="target.audit.topic-write"),
            Check("source.kerberos.initial-ticket", "pass", "a ticket", details={"lifetime": 36000}),
        ],
        {"source": 1.5, "target": 0.5},
    )


def test_preflight_json_from_main(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("secure_mirror.commands.preflight.run_preflight", lambda profile, **kw: _report())
    assert main(["preflight", "--json", _profile(tmp_path)]) == 1
    assert_valid("preflight", capsys.readouterr().out)


def test_acls_json_from_main(tmp_path, capsys, monkeypatch):
    reader = Acl(principal="User:app", operation="READ", resource_type="TOPIC", resource_name="payments")
    group = Acl(principal="User:app", operation="READ", resource_type="GROUP", resource_name="app")
    for target in ({"acls": [group]}, {"error": "not authorized"}):
        answers = {"source": {"acls": [reader, group], "topics": ["payments"]}, "target": target}
        monkeypatch.setattr("secure_mirror.commands.acls.read_both", lambda *a, answers=answers: answers)
        assert main(["acls", _profile(tmp_path), "--consumers", "--json"]) == 0
        assert_valid("acls", capsys.readouterr().out)


def test_groups_json_from_main(tmp_path, capsys, monkeypatch):
    from tests.unit.run.groups.test_decide import _observation

    class Session:
        map_topic, checkpoints_topic = "map", "src.checkpoints.internal"

        def __init__(self, profile):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def observe(self, groups):
            return _observation({("orders", 0): 5, ("spread", 0): 7}, {("src.orders", 0): (2, "")})

    monkeypatch.setattr("secure_mirror.commands.groups.Session", Session)
    assert main(["groups", "--json", _profile(tmp_path, groups={"include": "g"})]) == 0
    assert_valid("groups", capsys.readouterr().out)


def test_run_json_lines_from_main_when_preflight_does_not_pass(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("secure_mirror.preflight.run_preflight", lambda profile: _report())
    assert main(["run", _profile(tmp_path), "--json", "--run-dir", str(tmp_path / "run")]) == 1
    printed = capsys.readouterr().out
    assert [json.loads(line)["kind"] for line in printed.splitlines()] == ["preflight", "outcome"]
    assert_valid_lines("run", printed)
