"""Issue 25: ``render --out`` (and ``run --run-dir``, ``sandbox up --dir``) never writes through a symbolic link,
never widens a folder's mode, and makes folders only along the path as named."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from secure_mirror import folders
from secure_mirror.cli import main
from secure_mirror.errors import BadInputError
from secure_mirror.render import render_all
from secure_mirror.run import launcher
from secure_mirror.run.launcher import run_mirror
from secure_mirror.sandbox.bed import Sandbox
from tests.support import profiles as pf


def _link_refusal(option: str, link: Path) -> str:
    return f"{option} {link} is a symbolic link, and nothing is written through one; name the folder itself"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def umask_022():
    saved = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(saved)


@pytest.fixture
def profile(tmp_path):
    return pf.load(tmp_path / "p")


def _private_folder(path: Path) -> Path:
    path.mkdir()
    path.chmod(0o700)
    return path


def test_a_link_to_an_empty_private_folder_is_refused_and_the_folder_untouched(tmp_path, profile):
    private = _private_folder(tmp_path / "private")
    (tmp_path / "out").symlink_to(private)
    with pytest.raises(BadInputError) as caught:
        render_all(profile, tmp_path / "out", force=True)
    assert str(caught.value) == _link_refusal("--out", tmp_path / "out")
    assert (tmp_path / "out").is_symlink() and os.readlink(tmp_path / "out") == str(private)
    assert list(private.iterdir()) == [] and _mode(private) == 0o700
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "p", "private"]  # no staging folder left


def test_a_dangling_link_is_refused_and_nothing_is_made_where_it_points(tmp_path, profile):
    (tmp_path / "out").symlink_to(tmp_path / "elsewhere" / "deep" / "out")
    with pytest.raises(BadInputError) as caught:
        render_all(profile, tmp_path / "out")
    assert str(caught.value) == _link_refusal("--out", tmp_path / "out")
    assert not (tmp_path / "elsewhere").exists()


def test_a_dangling_link_among_the_parents_is_refused_and_nothing_is_made_where_it_points(tmp_path, profile):
    (tmp_path / "parent").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(BadInputError) as caught:
        render_all(profile, tmp_path / "parent" / "a" / "out")
    assert str(caught.value) == (
        f"--out {tmp_path / 'parent' / 'a' / 'out'} cannot be created ({tmp_path / 'parent'} is a symbolic link "
        "that leads to no folder); choose another folder"
    )
    assert not (tmp_path / "elsewhere").exists()


def test_parents_are_made_along_the_path_as_named(tmp_path, profile):
    """``link/..`` is the folder holding the link, as in a shell, not the parent of the link's target."""
    (tmp_path / "far" / "deep").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "far" / "deep")
    render_all(profile, f"{tmp_path}/link/../made/out")
    assert (tmp_path / "made" / "out" / "manifest.json").exists()
    assert sorted(p.name for p in (tmp_path / "far").iterdir()) == ["deep"]


def test_a_parent_may_be_a_link_to_a_folder(tmp_path, profile):
    """Only the folder's own place may not be a link: ``/tmp`` is one on some systems."""
    (tmp_path / "real").mkdir()
    (tmp_path / "parent").symlink_to(tmp_path / "real")
    render_all(profile, tmp_path / "parent" / "out")
    render_all(profile, tmp_path / "parent" / "new" / "out")
    assert (tmp_path / "real" / "out" / "manifest.json").exists()
    assert (tmp_path / "real" / "new" / "out" / "manifest.json").exists()


def test_an_existing_empty_private_folder_stays_private(tmp_path, profile, umask_022):
    out = _private_folder(tmp_path / "out")
    render_all(profile, out)
    assert _mode(out) == 0o700 and (out / "manifest.json").exists()


def test_force_over_a_private_folder_keeps_it_private(tmp_path, profile, umask_022):
    out = _private_folder(tmp_path / "out")
    (out / "old.txt").write_text("x")
    render_all(profile, out, force=True)
    assert _mode(out) == 0o700 and not (out / "old.txt").exists() and (out / "manifest.json").exists()


def test_the_mode_is_narrowed_never_widened(tmp_path, profile, umask_022):
    for mode, expected in ((0o750, 0o750), (0o777, 0o755), (0o711, 0o711)):
        out = tmp_path / f"out-{mode:o}"
        out.mkdir()
        out.chmod(mode)
        render_all(profile, out)
        assert _mode(out) == expected, f"{mode:o}"
    render_all(profile, tmp_path / "new")
    assert _mode(tmp_path / "new") == 0o755  # a new folder: 0755 less the umask, as before


def test_the_render_command_refuses_a_link_with_exit_2(tmp_path, profile, capsys):
    private = _private_folder(tmp_path / "private")
    (tmp_path / "out").symlink_to(private)
    argv = ["render", str(tmp_path / "p" / "profile.yaml"), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert main([*argv, "--force"]) == 2
    err = capsys.readouterr().err
    assert err == f"secure-mirror render: {_link_refusal('--out', tmp_path / 'out')}\n" * 2
    assert list(private.iterdir()) == [] and _mode(private) == 0o700


def test_run_dir_and_sandbox_dir_refuse_a_link_too(tmp_path, profile, monkeypatch):
    monkeypatch.setattr(launcher, "preflight_gate", lambda *a, **k: pytest.fail("pre-flight ran: the link was taken"))
    private = _private_folder(tmp_path / "private")
    (tmp_path / "run").symlink_to(private)
    with pytest.raises(BadInputError) as caught:
        run_mirror(profile, run_dir=str(tmp_path / "run"))
    assert str(caught.value) == _link_refusal("--run-dir", tmp_path / "run")
    (tmp_path / "sandbox").symlink_to(tmp_path / "nowhere")
    with pytest.raises(BadInputError) as caught:
        Sandbox.up(tmp_path / "sandbox")
    assert str(caught.value) == _link_refusal("--dir", tmp_path / "sandbox")
    assert list(private.iterdir()) == [] and not (tmp_path / "nowhere").exists()


def test_make_keeps_an_existing_folder_mode_and_refuses_a_link(tmp_path):
    folder = _private_folder(tmp_path / "folder")
    folders.make(folder, "--run-dir", mode=0o755)
    assert _mode(folder) == 0o700
    (tmp_path / "link").symlink_to(folder)
    with pytest.raises(BadInputError, match="is a symbolic link"):
        folders.make(tmp_path / "link", "--run-dir")
