"""Issue 25: a profile loads one way only. YAML merge keys (``<<``) are refused with their position: with two of
them one silently overrides the other (``security_protocol: SASL_SSL`` could become ``SASL_PLAINTEXT``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from secure_mirror.cli import main
from secure_mirror.profile import ProfileError, load_profile
from tests.support.profiles import profile_data

FIX = (
    "merge keys (<<) are not accepted in a profile (with two, one silently overrides the other); "
    "write the keys out in this mapping, so the profile loads one way only"
)


def _profile_text(tmp_path: Path, source_lines: list[str]) -> str:
    """A valid profile, with ``source_lines`` first in the source mapping and its security_protocol taken out."""
    data = profile_data(tmp_path)
    del data["source"]["security_protocol"]
    text = yaml.safe_dump(data, sort_keys=False)
    return text.replace("source:\n", "source:\n" + "".join(f"  {line}\n" for line in source_lines), 1)


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if line.strip().startswith(needle))


def _refused(path: Path) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    return caught.value.problems


def test_two_merge_keys_are_refused_at_the_first(tmp_path, capsys):
    text = _profile_text(tmp_path, ["<<: {security_protocol: SASL_SSL}", "<<: {security_protocol: SASL_PLAINTEXT}"])
    path = tmp_path / "two-merges.yaml"
    path.write_text(text)
    line = _line_of(text, "<<: {security_protocol: SASL_SSL}")
    assert _refused(path) == [f"(file): line {line} column 3: {FIX}"]
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"line {line} column 3: {FIX}" in err and "Traceback" not in err


def test_one_merge_key_from_an_anchor_is_refused(tmp_path):
    data = profile_data(tmp_path)
    text = yaml.safe_dump(data, sort_keys=False).replace("source:\n", "source: &source\n", 1)
    text = text.replace("target:\n", "target:\n  <<: *source\n", 1)
    path = tmp_path / "one-merge.yaml"
    path.write_text(text)
    assert _refused(path) == [f"(file): line {_line_of(text, '<<: *source')} column 3: {FIX}"]


def test_a_merge_key_in_flow_style_or_by_tag_is_refused(tmp_path):
    path = tmp_path / "flow.yaml"
    path.write_text("version: 1\nsource: {alias: src, !!merge x: {security_protocol: PLAINTEXT}}\n")
    assert _refused(path) == [f"(file): line 2 column 22: {FIX}"]


def test_anchors_and_aliases_without_merging_still_load(tmp_path):
    """Sharing a whole value is one reading only: it stays allowed."""
    data = profile_data(tmp_path)
    text = yaml.safe_dump(data, sort_keys=False)
    kdcs = "      kdcs:\n      - 127.0.0.1:41001\n"
    text = text.replace(kdcs, "      kdcs: &kdcs\n      - 127.0.0.1:41001\n", 1).replace(kdcs, "      kdcs: *kdcs\n", 1)
    assert "*kdcs" in text
    path = tmp_path / "anchors.yaml"
    path.write_text(text)
    profile = load_profile(path)
    assert profile.kerberos is not None
    assert [realm.kdcs for realm in profile.kerberos.realms.values()] == [["127.0.0.1:41001"]] * 2
