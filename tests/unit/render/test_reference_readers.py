"""Kafka's own readers resolve what ``render --secrets references`` writes to the secrets themselves: the clients'
``client.properties`` (``AdminClientConfig``, then ``JaasContext`` for ``sasl.jaas.config``) and ``mm2.properties``
(``MirrorMakerConfig``) with the Kafka of .deps/kafka, and the job's options with the job's kafka-clients through the
mirror's admin clients' filter (jvm/sink AdminSettings, which once dropped ``config.providers``). Each JVM runs with
Kafka's allow-list of providers set to what spark-conf.json renders, and the variables and files in place.

Run by tests/support/ProviderReferences.java, compiled with jvm/sink's AdminSettings.java.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyspark
import pytest

from secure_mirror import paths
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.render.java_properties import properties_text
from secure_mirror.render.providers import AUTOMATIC_PROVIDERS, REFERENCES
from secure_mirror.sandbox.sink_jar import JAVAC_LINT, SOURCES, job_kafka_clients
from tests.support import profiles as pf
from tests.support import seeds
from tests.support.marked_profiles import marked_profile

pytestmark = pytest.mark.jvm
CHECK = paths.REPO_ROOT / "tests" / "support" / "ProviderReferences.java"
KINDS = [("SCRAM-SHA-256", "oauth"), ("PLAIN", "mutual-tls"), ("SCRAM-SHA-512", "SCRAM-SHA-512"), ("oauth", "PLAIN")]
# the JAAS option or Kafka setting each profile field's secret reaches
SETTING = {
    "sasl.password": "jaas.password",
    "sasl.client_secret": "jaas.clientSecret",
    "tls.truststore_password": "ssl.truststore.password",
    "tls.key_password": "ssl.key.password",
    "tls.key": "ssl.keystore.key",
}


def _java(*args: str, class_path: str, env: dict[str, str]) -> list[str]:
    ran = subprocess.run(
        [paths.java_executable(), "-cp", class_path, *args], capture_output=True, text=True, timeout=300, env=env
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    return ran.stdout.splitlines()


def _compile(folder: Path) -> None:
    javac = str(Path(paths.java_executable()).with_name("javac"))
    sources = [SOURCES / "sink" / "AdminSettings.java", CHECK]
    built = subprocess.run(
        [javac, *JAVAC_LINT, "--release", "17", "-d", str(folder), "-cp", paths.kafka_classpath(), *map(str, sources)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]


def _allowed(out: Path) -> str:
    """The allow-list spark-conf.json gives the driver (one quoted word among its Java options)."""
    options = json.loads((out / "spark" / "spark-conf.json").read_text())["spark.driver.extraJavaOptions"]
    word = next(w for w in options.split('" "') if AUTOMATIC_PROVIDERS in w)
    return word.strip('"').split("=", 1)[1]


def _job_properties(out: Path, name: str, side: str) -> str:
    """The job's options for one side's Kafka clients (``kafka.`` taken off), as a .properties file."""
    options = json.loads((out / "spark" / name).read_text())
    settings = {key[len("kafka.") :]: value for key, value in options.items() if key.startswith("kafka.")}
    path = out.parent / f"job-{side}.properties"
    path.write_text(properties_text(settings, []), encoding="utf-8")
    return str(path)


def _case(tmp: Path, index: int, kinds: tuple[str, str], rng) -> tuple[dict, list[str], list[str], set[str]]:
    """Render one generated profile; its variables, the Kafka and job readers' arguments, the lines expected."""
    marked = marked_profile(tmp, rng, str(index), kinds, full=index % 2 == 1)
    out = tmp / "out"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in marked.env.items():
            patch.setenv(name, value)
        render_all(load_profile(pf.write_profile(tmp, marked.data)), out, secrets=REFERENCES)
    allowed, labels = _allowed(out), {}
    kafka, job = [], []
    for side, alias, options in (("source", "src", "source-options.json"), ("target", "tgt", "sink-options.json")):
        labels.update({f"{index}-{side}": side, f"{index}-mm2-{side}": side, f"{index}-job-{side}": side})
        kafka.append(f"client:{index}-{side}:{allowed}:{out / side / 'client.properties'}")
        kafka.append(f"mm2={alias}:{index}-mm2-{side}:{allowed}:{out / 'mm2' / 'mm2.properties'}")
        job.append(f"job:{index}-job-{side}:{allowed}:{_job_properties(out, options, side)}")
    expected = set()
    for name, value in marked.secrets.items():
        side, field = name.split(".", 1)
        if field == "tls.key":  # the key file's content, which Kafka trims as every password setting's value
            value = Path(marked.data[side]["tls"]["key"]).read_text().strip().replace("\n", "\\n")
        expected |= {f"{label}\t{SETTING[field]}\t{value}" for label, owner in labels.items() if owner == side}
    return marked.env, kafka, job, expected


def test_kafkas_readers_resolve_the_references_to_the_secrets(tmp_path):
    rng = seeds.seeded("profiles whose references Kafka resolves")
    classes = tmp_path / "classes"
    _compile(classes)
    env, kafka, job, expected = dict(os.environ), [], [], set()
    for index, kinds in enumerate(KINDS):
        variables, kafka_args, job_args, lines = _case(tmp_path / f"c{index}", index, kinds, rng)
        env.update(variables)
        kafka += kafka_args
        job += job_args
        expected |= lines
    main = "securemirror.sink.ProviderReferences"
    got = set(_java(main, *kafka, class_path=f"{classes}:{paths.kafka_classpath()}", env=env))
    job_path = f"{classes}:{Path(pyspark.__file__).parent / 'jars' / '*'}:{job_kafka_clients()}"
    got |= set(_java(main, *job, class_path=job_path, env=env))
    assert expected - got == set(), f"not resolved to the secret: {sorted(expected - got)[:5]}"
    assert len(expected) >= 3 * 2 * len(KINDS)  # three readers, and at least two secrets a profile
    assert {line.split("\t")[1] for line in expected} == set(SETTING.values())  # every kind of secret
