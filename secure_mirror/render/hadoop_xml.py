"""Hadoop's ``*-site.xml`` files (``core-site.xml``, ``hdfs-site.xml``, ``yarn-site.xml`` ...), written through the
Hadoop XML encoders (``render/encoders.py``), as ``org.apache.hadoop.conf.Configuration`` reads them."""

from __future__ import annotations

from collections.abc import Mapping

from secure_mirror.render import templating


def site_xml(file: str, properties: Mapping[str, object], purpose: str) -> str:
    """The text of ``file`` (e.g. ``core-site.xml``) holding ``properties`` in the given order."""
    return templating.render("templates/hadoop-site.xml.j2", file=file, properties=dict(properties), purpose=purpose)
