"""The driver JVM's class-data archive (secure_mirror/run/class_cache.py): which start uses one, writes one, or
leaves the JVM as the caller set it; the archive's name; what is kept after a job; what a new archive removes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from secure_mirror.run import class_cache

FOLDER = Path("/cache/secure-mirror/jvm")
NAME = "spark-0123456789abcdef.jsa"


def _decide(**changed):
    facts = dict(
        driver_here=True, callers_options=["", ""], folder=FOLDER, major=17, name=NAME, archive_exists=False, pid=42
    )
    return class_cache.decide(**{**facts, **changed})


def test_a_first_start_writes_the_archive_at_exit_under_a_name_of_its_own_process():
    plan = _decide()
    assert plan.options == (
        "-XX:ArchiveClassesAtExit=/cache/secure-mirror/jvm/spark-0123456789abcdef.42.partial",
        *class_cache.WRITING_LOG,
    )
    assert plan.archive == FOLDER / NAME and plan.dump == FOLDER / "spark-0123456789abcdef.42.partial"


def test_a_later_start_maps_the_archive_and_writes_none():
    plan = _decide(archive_exists=True)
    assert plan.options == (f"-XX:SharedArchiveFile={FOLDER / NAME}", *class_cache.MAPPING_LOG)
    assert plan.dump is None


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        ({"driver_here": False}, "the driver runs in the cluster"),
        ({"callers_options": ["-Xmx1g -XX:SharedArchiveFile=/mine.jsa", ""]}, "-XX:SharedArchiveFile"),
        ({"callers_options": ["", "'-Xshare:off'"]}, "-Xshare:off"),
        ({"callers_options": ["", "", "-XX:ArchiveClassesAtExit=/x"]}, "-XX:ArchiveClassesAtExit"),
        ({"folder": None}, "SECURE_MIRROR_CLASS_CACHE=off"),
        ({"major": 11}, "JDK 11 cannot write one"),
        ({"major": None}, "were not found"),
        ({"name": None}, "were not found"),
    ],
)
def test_the_jvm_is_left_as_the_caller_set_it(changed, said):
    plan = _decide(**changed)
    assert plan.options == () and plan.dump is None
    assert said in plan.said


def test_the_cache_folder_follows_the_variable_then_xdg_then_home():
    assert class_cache.cache_folder({"SECURE_MIRROR_CLASS_CACHE": "/srv/c", "HOME": "/h"}) == Path("/srv/c")
    assert class_cache.cache_folder({"SECURE_MIRROR_CLASS_CACHE": "off"}) is None
    assert class_cache.cache_folder({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/secure-mirror/jvm")
    assert class_cache.cache_folder({"HOME": "/h"}) == Path("/h/.cache/secure-mirror/jvm")


@pytest.mark.parametrize(
    ("release", "major"),
    [
        ('JAVA_VERSION="17.0.9"\n', 17),
        ('IMPLEMENTOR="x"\nJAVA_VERSION="1.8.0_392"\n', 8),
        ('JAVA_VERSION="21"', 21),
        ("", None),
    ],
)
def test_the_jdks_major_version_comes_from_its_release_file(release, major):
    assert class_cache.java_major(release) == major


def test_the_name_changes_with_the_jdk_and_with_any_jar():
    jars = [("spark-core.jar", 10, 1), ("scala-library.jar", 20, 2)]
    name = class_cache.archive_name("/jdk/bin/java", 'JAVA_VERSION="17.0.9"', "", jars)
    assert name == class_cache.archive_name("/jdk/bin/java", 'JAVA_VERSION="17.0.9"', "", list(reversed(jars)))
    assert name != class_cache.archive_name("/jdk/bin/java", 'JAVA_VERSION="17.0.10"', "", jars)
    assert name != class_cache.archive_name(
        "/jdk/bin/java", 'JAVA_VERSION="17.0.9"', "", [*jars[:1], ("scala-library.jar", 20, 3)]
    )
    assert name.startswith("spark-") and name.endswith(".jsa")


def test_a_dump_is_kept_private_only_when_the_job_ended_well(tmp_path):
    plan = _decide(folder=tmp_path)
    plan.dump.write_bytes(b"archive")
    assert class_cache.finish(plan, ended_well=False) is None
    assert not plan.dump.exists() and not plan.archive.exists()

    plan.dump.write_bytes(b"archive")
    plan.dump.chmod(0o644)
    assert str(plan.archive) in class_cache.finish(plan, ended_well=True)
    assert plan.archive.read_bytes() == b"archive" and not plan.dump.exists()
    assert plan.archive.stat().st_mode & 0o777 == 0o600


def test_a_new_archive_removes_older_archives_and_left_dumps_but_not_a_dump_in_progress(tmp_path):
    archive = tmp_path / "spark-new.jsa"
    older, left, dumping = tmp_path / "spark-old.jsa", tmp_path / "spark-x.1.partial", tmp_path / "spark-y.2.partial"
    other = tmp_path / "notes.txt"
    for path in (archive, older, left, dumping, other):
        path.write_bytes(b"x")
    long_ago = time.time() - class_cache.DUMP_GRACE_SECONDS - 60
    os.utime(left, (long_ago, long_ago))

    class_cache.remove_others(archive)

    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "spark-new.jsa", "spark-y.2.partial"]


def test_a_cache_others_may_write_or_a_link_is_never_used(tmp_path):
    folder, archive = tmp_path / "jvm", tmp_path / "jvm" / NAME
    assert class_cache.not_private(folder) is None  # not there yet: made 0700
    folder.mkdir(mode=0o700)
    archive.write_bytes(b"x")
    archive.chmod(0o600)
    assert class_cache.not_private(folder) is None and class_cache.not_private(archive) is None
    archive.chmod(0o666)
    assert "others may write" in class_cache.not_private(archive) and "0666" in class_cache.not_private(archive)
    folder.chmod(0o777)
    assert "others may write" in class_cache.not_private(folder)
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert "symbolic link" in class_cache.not_private(link)


def test_a_run_does_not_map_an_archive_others_may_write(tmp_path, monkeypatch):
    from secure_mirror.profile import load_profile
    from tests.support import profiles as pf

    profile = load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))
    folder = tmp_path / "cache"
    env = {"SECURE_MIRROR_CLASS_CACHE": str(folder), "HOME": str(tmp_path)}
    _, name = class_cache.installation(env)
    if name is None:
        pytest.skip("no JDK release file or pyspark jars here")
    first = class_cache.plan(profile, env)
    assert first.dump is not None and (folder.stat().st_mode & 0o777) == 0o700
    (folder / name).write_bytes(b"x")
    (folder / name).chmod(0o644)
    assert class_cache.plan(profile, env).options[0] == f"-XX:SharedArchiveFile={folder / name}"
    (folder / name).chmod(0o646)
    refused = class_cache.plan(profile, env)
    assert refused.options == () and "others may write" in refused.said
