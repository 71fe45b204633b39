"""secure-mirror bundle --out DIR: everything an air-gapped machine needs to run the mirror, in one folder.

``DIR/wheels``: secure-mirror's wheel, built from this checkout (it carries the compiled sink and Java tools), every
Python dependency as a wheel (pip's cache makes it fast on a machine set up by scripts/setup: pyspark is built there
once), setuptools and wheel, and confluent-kafka's source to build against a librdkafka with GSSAPI. ``DIR/jars``:
Spark's Kafka connector and the jars it needs (scripts/setup's ``.deps/spark-jars``), for
``mirror.spark.jars.local_dir``. ``DIR/README.md``: the install steps. Made on a connected machine from a checkout.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from importlib import metadata
from pathlib import Path

from secure_mirror import __version__, paths
from secure_mirror.errors import EXIT_OK, BadInputError, EnvironmentNotReady
from secure_mirror.profile.policy import printable

SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "secure_mirror", "jvm", "templates", "jaas")
SETUP = "run scripts/setup in this checkout first"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="folder to write the bundle into (created; must be empty)")


def confluent_kafka_version() -> str:
    """The confluent-kafka version pyproject.toml pins (its one home): the one scripts/setup builds with GSSAPI."""
    with open(paths.REPO_ROOT / "pyproject.toml", "rb") as handle:
        requirements = tomllib.load(handle)["project"]["dependencies"]
    return next(m[1] for r in requirements if (m := re.fullmatch(r"confluent-kafka==([0-9][0-9.]*)", r)))


def run(args: argparse.Namespace) -> int:
    out = _empty_folder(Path(args.out))
    jars = _connector_jars()
    wheel = _build_wheel(out / "wheels")  # its requirements pin confluent-kafka
    _pip("wheel", "-q", "-w", str(out / "wheels"), "--find-links", str(out / "wheels"), str(wheel),
         "setuptools", "wheel", doing="collecting the Python dependencies as wheels")  # fmt: skip
    _pip("download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(out / "wheels"),
         f"confluent-kafka=={confluent_kafka_version()}", doing="downloading confluent-kafka's source")  # fmt: skip
    (out / "jars").mkdir()
    for jar in jars:
        shutil.copy2(jar, out / "jars" / jar.name)
    (out / "README.md").write_text(readme(wheel.name, [jar.name for jar in jars]), encoding="utf-8")
    count = len(list((out / "wheels").iterdir()))
    print(f"bundled {count} Python packages and {len(jars)} jars into {printable(str(out))}; see its README.md")
    return EXIT_OK


def _empty_folder(out: Path) -> Path:
    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise BadInputError(f"--out {printable(str(out))} exists and is not an empty folder; name a new one")
    out.mkdir(parents=True, exist_ok=True)
    return out.resolve()


def _connector_jars() -> list[Path]:
    if not paths.in_checkout():
        raise EnvironmentNotReady(
            "bundle builds secure-mirror's wheel from a checkout (its jvm/ sources); run it from a clone's .venv"
        )
    jars = paths.spark_connector_jars()
    found = {name for name in paths.CONNECTOR_JARS if any(jar.name.startswith(name) for jar in jars)}
    if found != set(paths.CONNECTOR_JARS):
        raise EnvironmentNotReady(
            f"Spark's Kafka connector jars are missing from {paths.deps_dir()}/spark-jars; {SETUP}"
        )
    return jars


def _build_wheel(folder: Path) -> Path:
    """The wheel, built from a copy of the checkout's sources (no build/ left in the checkout, nothing stale from an
    earlier build), compiled against this checkout's .deps."""
    with tempfile.TemporaryDirectory(prefix="secure-mirror-wheel-") as tmp:
        source = Path(tmp) / "src"
        source.mkdir()
        for name in SOURCES:
            origin = paths.REPO_ROOT / name
            if origin.is_dir():  # secure_mirror/_data's links to ../templates and ../jaas stay links
                shutil.copytree(origin, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(origin, source / name)
        env = {"SECURE_MIRROR_DEPS": str(paths.deps_dir())}
        _pip("wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(folder), str(source), env=env,
             doing="building secure-mirror's wheel (compiling its Java)")  # fmt: skip
    [wheel] = folder.glob("secure_mirror-*.whl")
    return wheel


def _pip(*argv: str, doing: str, env: dict[str, str] | None = None) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "pip", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **(env or {})},
    )
    if res.returncode != 0:
        last = "\n".join((res.stderr.strip() or res.stdout.strip()).splitlines()[-15:])
        raise EnvironmentNotReady(f"{doing} failed (pip {argv[0]}, exit {res.returncode}):\n{last}")


def readme(wheel: str, jars: list[str]) -> str:
    """The bundle's install steps."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    try:
        built = metadata.version("confluent-kafka")
    except metadata.PackageNotFoundError:
        built = "none"
    return README.format(
        version=__version__,
        wheel=wheel,
        python=python,
        machine=f"{platform.system()} {platform.machine()}",
        ck=confluent_kafka_version(),
        built=built,
        jars="\n".join(f"- `{jar}`" for jar in jars),
        package=paths.CONNECTOR_PACKAGE,
    )


README = """# secure-mirror {version}: an offline bundle

Made by `secure-mirror bundle` on {machine} with Python {python} (confluent-kafka {built} where it was made). Install
it on the same platform and Python version ({python}); nothing below fetches anything.

- `wheels/`: `{wheel}` (it carries the mirror's compiled Spark sink and Java tools), every Python dependency as a
  wheel, setuptools and wheel, and `confluent_kafka-{ck}.tar.gz`, confluent-kafka's source;
- `jars/`: Spark's Kafka connector for Spark 4.0.0 / Scala 2.13 (`{package}`) and the jars it needs that pyspark
  does not ship:
{jars}

## Install

The machine needs Java 17 or later (`JAVA_HOME` or `java` on PATH) and MIT Kerberos' tools (`kinit`, `klist`,
`kvno`; Debian: `apt install openjdk-17-jre-headless krb5-user`).

```sh
B=/path/to/this/bundle
python{python} -m venv /opt/secure-mirror
/opt/secure-mirror/bin/pip install --no-index --find-links $B/wheels setuptools wheel
```

**GSSAPI (Kerberos) needs confluent-kafka built against a librdkafka with SASL GSSAPI.** PyPI's confluent-kafka
wheel (also in `wheels/`) bundles a librdkafka without it. Build it from the source in `wheels/` against your
system's librdkafka ({ck} or later, built with cyrus-sasl and OpenSSL: Debian trixie's `librdkafka-dev` with
`libsasl2-modules-gssapi-mit`, RHEL's `librdkafka-devel` and `cyrus-sasl-gssapi`, or one built as the repository's
`scripts/setup` builds it), before secure-mirror, so pip keeps that build:

```sh
# headers and library of that librdkafka; LDFLAGS' rpath only when it is not in the linker's default path
C_INCLUDE_PATH=/usr/include LIBRARY_PATH=/usr/lib LDFLAGS="-Wl,-rpath,/usr/lib" \\
  /opt/secure-mirror/bin/pip install --no-index --find-links $B/wheels --no-build-isolation \\
  --no-binary confluent-kafka confluent-kafka=={ck}
```

Without GSSAPI (SCRAM, PLAIN, OAUTHBEARER, mutual TLS only) skip that step: PyPI's wheel serves. Then:

```sh
/opt/secure-mirror/bin/pip install --no-index --find-links $B/wheels secure-mirror
/opt/secure-mirror/bin/secure-mirror doctor     # each part this machine has or lacks, with the fix
```

## The connector jars

In the profile, point the job at the jars (nothing is resolved or fetched at start):

```yaml
mirror:
  spark:
    jars:
      local_dir: /path/to/this/bundle/jars
```

Pre-flight's Java check uses the same folder. Without `local_dir`, Spark resolves `{package}` when the job starts
(`spark.jars.packages`), from Maven Central or from `mirror.spark.jars.repositories` / `ivy_settings` (an internal
repository or proxy).
"""
