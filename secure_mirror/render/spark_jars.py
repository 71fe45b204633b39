"""Where the job's jars come from: the mirror's sink jar, and Spark's Kafka connector (local jars, or resolved by
Spark with an Ivy settings file rendered beside the configuration). ``render/spark.py`` re-exports these."""

from __future__ import annotations

from pathlib import Path

from secure_mirror import paths
from secure_mirror.profile.models import Profile
from secure_mirror.render.encoders import ivy_attribute

IVY_SETTINGS_FILE = "spark/ivysettings.xml"  # rendered when Spark resolves the connector and the profile names none
MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2/"


def _connector_jars(profile: Profile) -> list[Path]:
    """The connector's local jars: ``mirror.spark.jars.local_dir``'s, else a checkout's ``.deps`` unless the profile
    names repositories or Ivy settings; none when Spark resolves it."""
    jars = profile.mirror.spark.jars
    if jars.local_dir:
        return paths.jars_in(jars.local_dir)
    return [] if jars.resolves else paths.spark_connector_jars()


def renders_ivy_settings(profile: Profile) -> bool:
    """Spark resolves the connector (no local jars) and the profile names no Ivy settings file of its own: then ours
    is rendered (:func:`ivy_settings`) and handed to Spark (:func:`jar_conf`)."""
    return profile.mirror.spark.jars.ivy_settings is None and not _connector_jars(profile)


def jar_conf(profile: Profile, out_dir: Path) -> dict[str, str]:
    """Where the job's jars come from: the mirror's sink is always a local jar (the wheel's, or setup's in a
    checkout); Spark's Kafka connector comes from ``mirror.spark.jars.local_dir``, else from a checkout's ``.deps``
    (scripts/setup) unless the profile names repositories or Ivy settings, else Spark resolves it at start
    (``spark.jars.packages``, the pinned Spark's coordinates) with the profile's Ivy settings file, or with the one
    rendered beside this configuration (:func:`ivy_settings`: the profile's repositories, or Maven Central)."""
    jars = profile.mirror.spark.jars
    local = _connector_jars(profile)
    conf = {"spark.jars": ",".join(str(jar) for jar in sorted([paths.sink_jar(), *local], key=lambda jar: jar.name))}
    if local:
        return conf
    conf["spark.jars.packages"] = paths.CONNECTOR_PACKAGE
    if renders_ivy_settings(profile):
        conf["spark.jars.ivySettings"] = str(Path(out_dir) / IVY_SETTINGS_FILE)
    else:  # the profile's own file, and Spark adds the repositories after its resolvers
        conf["spark.jars.ivySettings"] = str(jars.ivy_settings)
        if jars.repositories:
            conf["spark.jars.repositories"] = ",".join(jars.repositories)
    return conf


def ivy_settings(profile: Profile) -> str | None:
    """The Ivy settings file Spark resolves the connector with when the profile names none: a chain of the
    profile's repositories, in their order, or of Maven Central when it names none. Spark's own resolvers, without
    it, ask the local Maven repository (``~/.m2``) first, and one holding a dependency's pom without its jar (as a
    Maven build leaves it) fails the job's start ("download failed: ...!slf4j-api.jar") rather than asking the next
    repository; and they ask Maven Central and spark-packages besides the repositories a profile names. Spark's Ivy
    cache (``spark.jars.ivy``) still serves what an earlier start resolved. None when nothing is resolved or the
    profile names its own file."""
    if not renders_ivy_settings(profile):
        return None
    jars = profile.mirror.spark.jars
    roots = jars.repositories or [MAVEN_CENTRAL]
    resolvers = "\n".join(
        f'      <ibiblio name="repository-{index}" m2compatible="true" '
        f'root="{ivy_attribute(url, f"mirror.spark.jars.repositories[{index}]")}"/>'
        for index, url in enumerate(roots)
    )
    return (
        "<!-- Rendered by secure-mirror: where Spark resolves its Kafka connector (spark.jars.ivySettings). -->\n"
        "<ivysettings>\n"
        '  <settings defaultResolver="secure-mirror"/>\n'
        "  <resolvers>\n"
        '    <chain name="secure-mirror" returnFirst="true">\n'
        f"{resolvers}\n"
        "    </chain>\n"
        "  </resolvers>\n"
        "</ivysettings>\n"
    )
