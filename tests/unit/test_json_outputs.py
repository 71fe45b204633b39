"""validate --json and render --json print the shapes committed in schema/ (generated from commands/outputs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from secure_mirror.cli import main
from secure_mirror.commands import outputs
from tests.support.profiles import profile_data, write_profile

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(outputs.SHAPES))
def test_committed_output_schemas_are_generated(name):
    committed = (REPO / "schema" / f"{name}-output.schema.json").read_text()
    assert committed == outputs.schema_text(name), (
        f"regenerate: secure-mirror schema --of {name} > schema/{name}-output.schema.json"
    )


def test_validate_json_summarises_a_good_profile(tmp_path, capsys):
    assert main(["validate", "--json", str(write_profile(tmp_path, profile_data(tmp_path)))]) == 0
    result = outputs.ValidateOutput.model_validate_json(capsys.readouterr().out)
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
    assert result["ok"] is False and len(result["problems"]) == 2
    assert result["problems"][0].startswith("source.sasl.kafka_principal: the principal holds '*'")


def test_validate_json_strict_turns_warnings_into_problems(tmp_path, capsys):
    data = profile_data(tmp_path)
    data["mirror"]["topics"] = {"include": ".*", "grant_all_topics": True}
    path = str(write_profile(tmp_path, data))
    assert main(["validate", "--json", path]) == 0
    [warning] = json.loads(capsys.readouterr().out)["warnings"]
    assert warning["field"] == "mirror.topics.grant_all_topics"
    assert main(["validate", "--json", "--strict", path]) == 2
    assert json.loads(capsys.readouterr().out)["problems"][0].startswith("mirror.topics.grant_all_topics: ")


def test_render_json_lists_the_files_written(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["render", "--json", str(write_profile(tmp_path, profile_data(tmp_path))), "--out", str(out)]) == 0
    result = outputs.RenderOutput.model_validate_json(capsys.readouterr().out)
    assert result.out == str(out)
    written = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert {entry.path for entry in result.files} == written
    assert all(entry.mode == f"{(out / entry.path).stat().st_mode & 0o777:04o}" for entry in result.files)
