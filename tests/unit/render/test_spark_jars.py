"""Where the job's jars come from (issue 30): the sink always as a local jar; Spark's Kafka connector from
``mirror.spark.jars.local_dir``, a checkout's ``.deps``, or ``spark.jars.packages`` with the profile's repositories or
Ivy settings. The installed-package case is shown by pointing SECURE_MIRROR_DEPS away and faking no checkout; the
resolution itself runs in tests/integration/test_wheel_install.py (local jars) and at every checkout run (.deps)."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

import pytest

from secure_mirror import paths
from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.render.encoders import UnrepresentableValue
from secure_mirror.render.spark import spark_conf, spark_submit
from secure_mirror.render.spark_jars import IVY_SETTINGS_FILE, MAVEN_CENTRAL, ivy_settings, jar_conf
from secure_mirror.render.tree import render_files
from tests.support.profiles import gssapi, profile_data, write_profile

CONNECTOR = ("spark-sql-kafka-0-10_2.13-4.0.0.jar", "kafka-clients-3.9.0.jar", "commons-pool2-2.12.0.jar")


def _profile(tmp_path: Path, jars: dict | None = None):
    data = profile_data(tmp_path, gssapi(tmp_path, "source"), gssapi(tmp_path, "target"))
    if jars is not None:
        data["mirror"]["spark"] = {"jars": jars}
    return load_profile(write_profile(tmp_path, data))


def _jar_folder(folder: Path, names=CONNECTOR) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"PK")
    return folder


@pytest.fixture()
def installed(monkeypatch, tmp_path):
    """As from a wheel: no checkout beside the package, no SECURE_MIRROR_DEPS, the wheel's sink jar."""
    monkeypatch.delenv("SECURE_MIRROR_DEPS", raising=False)
    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    sink = _jar_folder(tmp_path / "site" / "_data" / "jars", [paths.SINK_JAR]) / paths.SINK_JAR
    monkeypatch.setattr(paths, "packaged_jar", lambda name: sink if name == paths.SINK_JAR else None)
    return sink


def _resolvers(settings: str) -> tuple[str, list[str]]:
    """The default resolver of an Ivy settings file and the roots of its chain, as an XML reader sees them."""
    root = ElementTree.fromstring(settings)
    default = root.find("settings").get("defaultResolver")
    (chain,) = root.find("resolvers").findall("chain")
    assert chain.get("name") == default
    return default, [(r.tag, r.get("m2compatible"), r.get("root")) for r in chain]


def test_an_installed_package_has_spark_resolve_the_pinned_connector_from_maven_central(tmp_path, installed):
    out = tmp_path / "out"
    assert jar_conf(_profile(tmp_path), out) == {
        "spark.jars": str(installed),
        "spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.0",
        "spark.jars.ivySettings": str(out / IVY_SETTINGS_FILE),
    }
    # Maven Central alone, never the local Maven repository (a pom there without its jar fails Spark's resolution)
    files = {f.path: f for f in render_files(_profile(tmp_path), out)}
    assert _resolvers(files[IVY_SETTINGS_FILE].content)[1] == [("ibiblio", "true", MAVEN_CENTRAL)]
    assert not files[IVY_SETTINGS_FILE].secret


def test_named_repositories_alone_make_the_rendered_chain_in_their_order(tmp_path, installed):
    repos = ["https://nexus.corp.example/repository/maven-central/?a=1&b=<2>", "file:///srv/maven"]
    profile = _profile(tmp_path, {"repositories": repos})
    assert _resolvers(ivy_settings(profile))[1] == [("ibiblio", "true", url) for url in repos]  # read back exactly
    assert "spark.jars.repositories" not in jar_conf(profile, tmp_path / "out")  # in the chain, not after Spark's


def test_a_repository_ivy_would_expand_is_refused(tmp_path, installed):
    profile = _profile(tmp_path, {"repositories": ["https://nexus.example/${user.home}/maven"]})
    with pytest.raises(UnrepresentableValue, match=r"mirror\.spark\.jars\.repositories\[0\].*Ivy expands it"):
        ivy_settings(profile)


def test_the_profiles_repositories_and_ivy_settings_are_handed_to_spark(tmp_path, installed):
    settings = tmp_path / "ivysettings.xml"
    settings.write_text("<ivysettings/>")
    repos = ["https://nexus.corp.example/repository/maven-central/", "file:///srv/maven"]
    profile = _profile(tmp_path, {"repositories": repos, "ivy_settings": str(settings)})
    conf = jar_conf(profile, tmp_path / "out")
    assert ivy_settings(profile) is None  # the profile's own file, none of ours
    assert conf == {
        "spark.jars": str(installed),
        "spark.jars.packages": paths.CONNECTOR_PACKAGE,
        "spark.jars.repositories": ",".join(repos),
        "spark.jars.ivySettings": str(settings),
    }


def test_a_local_folder_of_jars_is_used_as_is_and_nothing_is_resolved(tmp_path, installed):
    folder = _jar_folder(tmp_path / "bundle" / "jars")
    conf = jar_conf(_profile(tmp_path, {"local_dir": "bundle/jars"}), tmp_path / "out")  # relative to the profile
    names = sorted([*CONNECTOR, paths.SINK_JAR])
    assert conf == {"spark.jars": ",".join(str(installed if n == paths.SINK_JAR else folder / n) for n in names)}


def test_the_rendered_spark_submit_carries_the_resolution(tmp_path, installed):
    profile = _profile(tmp_path, {"repositories": ["https://repo.example/maven"]})
    script = spark_submit(profile, tmp_path / "out")
    assert f"--jars {installed} \\" in script
    assert f"--conf spark.jars.packages={paths.CONNECTOR_PACKAGE} \\" in script
    assert f"--conf spark.jars.ivySettings={tmp_path / 'out' / IVY_SETTINGS_FILE} \\" in script
    assert spark_conf(profile, tmp_path / "out")["spark.jars"] == str(installed)


def test_a_checkout_uses_the_jars_setup_installed(tmp_path, monkeypatch):
    deps = tmp_path / "deps"
    _jar_folder(deps / "spark-jars", [*CONNECTOR, paths.SINK_JAR])
    monkeypatch.setenv("SECURE_MIRROR_DEPS", str(deps))
    conf = jar_conf(_profile(tmp_path), tmp_path / "out")
    assert ivy_settings(_profile(tmp_path)) is None
    assert conf == {"spark.jars": ",".join(str(deps / "spark-jars" / n) for n in sorted([*CONNECTOR, paths.SINK_JAR]))}
    resolved = jar_conf(_profile(tmp_path, {"repositories": ["https://repo.example/maven"]}), tmp_path / "out")
    assert resolved["spark.jars"] == str(deps / "spark-jars" / paths.SINK_JAR)  # named repositories: Spark resolves
    assert resolved["spark.jars.packages"] == paths.CONNECTOR_PACKAGE


@pytest.mark.parametrize(
    ("jars", "message"),
    [
        ({"repositories": ["https://user:secret@nexus.example/maven"]}, "without a comma or user@"),
        ({"repositories": ["nexus.example/maven"]}, "must be an http(s):// or file:// URL"),
        ({"repositories": ["https://a.example/m,https://b.example/m"]}, "without a comma"),
        ({"local_dir": "empty"}, "holds no spark-sql-kafka-0-10_2.13-*.jar"),
        ({"local_dir": "jars", "repositories": ["https://a.example/m"]}, "either local_dir or repositories"),
        ({"ivy_settings": "missing.xml"}, "missing.xml"),
    ],
)
def test_bad_jar_settings_are_refused_with_the_field_and_the_fix(tmp_path, jars, message):
    (tmp_path / "empty").mkdir()
    _jar_folder(tmp_path / "jars")
    with pytest.raises(ProfileError) as failure:
        _profile(tmp_path, jars)
    assert "mirror.spark.jars." in str(failure.value) and message in str(failure.value)
    assert "secret" not in str(failure.value).replace("secret-", "")
