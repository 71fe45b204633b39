"""Hadoop's *-site.xml through the XML encoder, read back by Hadoop's own ``Configuration`` (jvm/tools/
HadoopConfRead.java on pyspark's Hadoop client jars); what it cannot carry is refused, naming the property."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.profile.runtime import Hadoop
from secure_mirror.render.encoders import UnrepresentableValue
from secure_mirror.render.hadoop_conf import site_files, site_xml

REPO = Path(__file__).resolve().parents[3]
HOSTILE = {
    "a.markup": "<value>x</value> & </configuration> <!-- -->",
    "a.quotes": "it's \"quoted\" 'twice'",
    "a.dollar": "$HOME $ {x} $$ \\ \\n",
    "a.unicode": "Grüße ☃ 𝄞",
    "a.rules": "RULE:[2:$1@$0](nn@SOURCE\\.TEST)s/.*/hdfs/ DEFAULT",
    "a.cdata": "]]> <![CDATA[ x ]]>",
}


def _read_back(path: Path) -> dict[str, str]:
    jars = Path(__import__("pyspark").__file__).parent / "jars"
    res = subprocess.run(
        [paths.java_executable(), "-cp", f"{jars}/*", str(REPO / "jvm" / "tools" / "HadoopConfRead.java"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return {
        name: base64.b64decode(value).decode("utf-8")
        for name, _, value in (line.partition("\t") for line in res.stdout.splitlines())
    }


@pytest.mark.jvm
@pytest.mark.skipif(shutil.which(paths.java_executable()) is None, reason="java is missing")
def test_hadoop_configuration_reads_back_exactly_what_was_encoded(tmp_path):
    path = tmp_path / "core-site.xml"
    path.write_text(site_xml("core-site.xml", HOSTILE, "hostile values"), encoding="utf-8")
    assert _read_back(path) == HOSTILE


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("${user.name}", "hadoop.core-site.xml.a.b: the value contains '${'"),
        (" padded", "hadoop.core-site.xml.a.b: the value contains blanks at its start or end"),
        ("line\nbreak", "hadoop.core-site.xml.a.b: the value contains"),
    ],
)
def test_values_hadoop_would_alter_are_refused_naming_the_property(value, fragment):
    with pytest.raises(
        UnrepresentableValue,
        match=fragment.replace(".", r"\.").replace("$", r"\$").replace("{", r"\{").replace("[", r"\["),
    ):
        site_xml("core-site.xml", {"a.b": value}, "test")


def test_cluster_folder_values_keep_hadoop_variables_and_profile_properties_win(tmp_path):
    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>hadoop.tmp.dir</name><value>/tmp/${user.name}</value></property>"
        "<property><name>fs.defaultFS</name><value>hdfs://old:8020</value></property></configuration>"
    )
    keytab = tmp_path / "k.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    hadoop = Hadoop(
        conf_dir=tmp_path,
        properties={"core-site.xml": {"fs.defaultFS": "hdfs://nn:8020"}},
        principal="mirror@EXAMPLE.COM",
        keytab=keytab,
    )
    text = site_files(hadoop)["core-site.xml"]
    assert "<value>/tmp/${user.name}</value>" in text and "hdfs://nn:8020" in text and "old:8020" not in text
    with pytest.raises(UnrepresentableValue, match="hadoop.core-site.xml.fs.defaultFS"):
        site_files(
            Hadoop(
                conf_dir=tmp_path,
                properties={"core-site.xml": {"fs.defaultFS": "hdfs://${x}"}},
                principal="mirror@EXAMPLE.COM",
                keytab=keytab,
            )
        )


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({}, "the hadoop section needs conf_dir or properties"),
        ({"properties": {"core.xml": {"a": "b"}}}, "is not a Hadoop site file name"),
        ({"conf_dir": "/nonexistent/hadoop-conf"}, "is not a folder holding *-site.xml files"),
    ],
)
def test_a_hadoop_section_without_a_usable_configuration_is_refused_with_the_fix(tmp_path, section, message):
    from pydantic import ValidationError

    keytab = tmp_path / "k.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o600)
    with pytest.raises(ValidationError) as error:
        Hadoop(principal="mirror@EXAMPLE.COM", keytab=keytab, **section)
    assert message in str(error.value)
