"""Hadoop's ``*-site.xml`` files (``core-site.xml``, ``hdfs-site.xml``, ``yarn-site.xml`` ...), written through the
Hadoop XML encoders (``render/encoders.py``) as ``org.apache.hadoop.conf.Configuration`` reads them, and the
``hadoop/`` folder render writes from a profile's ``hadoop`` section (spark-submit's ``HADOOP_CONF_DIR``)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping
from pathlib import Path

from secure_mirror.errors import BadInputError
from secure_mirror.profile.runtime import Hadoop
from secure_mirror.render import templating

FOLDER = "hadoop"


def site_xml(
    file: str, properties: Mapping[str, object], purpose: str, cluster_values: frozenset[str] = frozenset()
) -> str:
    """The text of ``file`` (e.g. ``core-site.xml``) holding ``properties`` in the given order. Names in
    ``cluster_values`` were read from the cluster's own site files: their ``${...}`` keep Hadoop's meaning."""
    entries = [(name, value, name in cluster_values) for name, value in properties.items()]
    return templating.render("templates/hadoop-site.xml.j2", file=file, entries=entries, purpose=purpose)


def read_site_file(path: Path) -> dict[str, str]:
    """The properties of one ``*-site.xml`` (``<configuration><property><name>/<value>``), in file order."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as exc:
        raise BadInputError(
            f"hadoop.conf_dir: {path} cannot be read as a Hadoop configuration file ({exc}); fix or remove it"
        ) from None
    properties = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name is not None:
            properties[name.strip()] = (value or "").strip()
    return properties


def site_files(hadoop: Hadoop) -> dict[str, str]:
    """File name -> text: the cluster folder's site files with the profile's properties set over them."""
    files: dict[str, dict[str, object]] = {}
    from_cluster: dict[str, set[str]] = {}
    if hadoop.conf_dir is not None:
        for path in sorted(hadoop.conf_dir.glob("*-site.xml")):
            files[path.name] = dict(read_site_file(path))
            from_cluster[path.name] = set(files[path.name])
    for name, properties in hadoop.properties.items():
        files.setdefault(name, {}).update(properties)
        from_cluster.get(name, set()).difference_update(properties)
    return {
        name: site_xml(
            name,
            properties,
            f"{name} for the mirror job's Hadoop client, rendered by secure-mirror",
            frozenset(from_cluster.get(name, ())),
        )
        for name, properties in files.items()
    }
