"""``run`` with references (run/secret_files.py): an ``env:`` secret, withheld from every child's environment, is
handed to the job alone in a 0600 file of the run folder, and the job's rendered files hold only references to it;
the file goes when the run ends."""

from __future__ import annotations

import json
import stat

from secure_mirror.profile import load_profile
from secure_mirror.render.providers import VALUES
from secure_mirror.run import secret_files
from secure_mirror.run.launcher import prepare
from tests.support import profiles as pf

MARKER = "Zq9-env-marker-4471"


def _env_profile(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRROR_TARGET_PW", MARKER)
    target = pf.password(tmp_path, "target", "SCRAM-SHA-512")
    target["sasl"]["password"] = "env:MIRROR_TARGET_PW"
    return load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path, target=target)))


def test_an_env_secret_is_handed_in_a_0600_file_and_the_options_reference_it(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    script = prepare(_env_profile(tmp_path, monkeypatch), run_dir)
    handed = run_dir / "secrets" / "env.MIRROR_TARGET_PW"
    assert handed.read_text(encoding="utf-8") == MARKER
    assert stat.S_IMODE(handed.stat().st_mode) == 0o600 and stat.S_IMODE(handed.parent.stat().st_mode) == 0o700
    sink = json.loads((script.parent / "sink-options.json").read_text(encoding="utf-8"))
    assert "${directory:" + str(run_dir / "secrets") + ":env.MIRROR_TARGET_PW}" in sink["kafka.sasl.jaas.config"]
    assert sink["kafka.config.providers.directory.param.allowed.paths"] == str(run_dir / "secrets")
    holding = [p for p in run_dir.rglob("*") if p.is_file() and MARKER in p.read_text(encoding="utf-8")]
    assert holding == [handed]
    secret_files.remove(run_dir)
    assert not (run_dir / "secrets").exists() and script.exists()


def test_with_values_nothing_is_handed_and_the_options_hold_the_value(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    script = prepare(_env_profile(tmp_path, monkeypatch), run_dir, VALUES)
    assert not (run_dir / "secrets").exists()
    assert MARKER in (script.parent / "sink-options.json").read_text(encoding="utf-8")


def test_file_secrets_stay_where_they_are(tmp_path):
    target = pf.password(tmp_path, "target", "SCRAM-SHA-512", value="Zq9w", newline=False)
    profile = pf.load(tmp_path, target=target)
    assert secret_files.job_profile(profile, tmp_path / "run") == profile
    assert not (tmp_path / "run").exists()


def test_a_file_secret_ending_in_a_line_break_is_handed_without_it(tmp_path):
    profile = pf.load(tmp_path, target=pf.password(tmp_path, "target", "SCRAM-SHA-512", value="Zq9w"))  # echo pw >
    handed = secret_files.job_profile(profile, tmp_path / "run")
    copy = tmp_path / "run" / "secrets" / "file.0"
    assert str(handed.target.sasl.password) == f"file:{copy}" and copy.read_bytes() == b"Zq9w"
    assert handed.source == profile.source
