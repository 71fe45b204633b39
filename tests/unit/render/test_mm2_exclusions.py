"""MirrorMaker 2's own exclusions, read from Kafka 4.2's connect-mirror in .deps, against ours (docs/replica.md: "the
same six excluded"; docs/security.md: the reserved topics "extend MirrorMaker 2's default topics.exclude, which the
rendered mm2.properties uses too").

tests/support/MirrorDefaults.java (one JVM for the module) builds a flow's source connector config as a dedicated
MirrorMaker 2 does, once from settings naming only the two clusters and once from the rendered mm2.properties, and
answers with MirrorSourceConnector's own filters:

- ``config.properties.exclude``: its default is profile/topic_shape.py's six, and for every topic config Kafka knows,
  ``topic_shape.excluded`` leaves out what MirrorMaker 2's default filter leaves out;
- ``topics.exclude``: every topic MirrorMaker 2 leaves out by default, the job never selects (profile/topics.py's
  ``ALWAYS_EXCLUDED`` holds more, never less);
- the rendered mm2.properties: its flow replicates exactly the topics the job selects.

Topic names are drawn from the pieces of internal and reserved names (seeded, the seed printed), beside the names
MirrorMaker 2 and Kafka give their own topics.
"""

from __future__ import annotations

import random
import subprocess

import pytest

from secure_mirror import paths
from secure_mirror.profile import load_profile
from secure_mirror.profile.topic_shape import MM2_EXCLUDED_CONFIGS, excluded
from secure_mirror.render.mm2 import mm2_properties
from tests.support import seeds
from tests.support.profiles import profile_data, write_profile

pytestmark = pytest.mark.jvm
PROGRAM = paths.REPO_ROOT / "tests" / "support" / "MirrorDefaults.java"
# The Kafka jars it runs with, of .deps/kafka/lib: MirrorMakerConfig scans its class path for Connect plugins, 4 s
# over all of Kafka's jars, 1.5 s over these.
JARS = ["connect-mirror", "connect-mirror-client", "connect-runtime", "connect-api", "connect-transforms"]
JARS += ["connect-json", "kafka-clients", "kafka-storage", "kafka-storage-api", "kafka-server-common", "slf4j-api"]
JARS += ["classgraph", "maven-artifact", "plexus-utils", "commons-lang3", "jackson-databind", "jackson-core"]
JARS += ["jackson-annotations"]
# the topics Kafka and MirrorMaker 2 (source alias src, target tgt) name for themselves, and near misses
KNOWN = [
    "__consumer_offsets",
    "__transaction_state",
    "mm2-offset-syncs.tgt.internal",
    "mm2-offset-syncs.src.internal",
    "src.checkpoints.internal",
    "mm2-configs.src.internal",
    "mm2-offsets.tgt.internal",
    "mm2-status.src.internal",
    "mm2.internal",
    "mm2internal",
    "heartbeats",
    "src.heartbeats",
    "tgt.orders",
    "orders.replica",
    "orders",
    "_schemas",
]
PIECES = ["mm2", "mm2-offset-syncs", "checkpoints", "heartbeats", "internal", "replica", "src", "tgt", "orders"]
PIECES += ["connect", "configs", "_schemas", "_confluent", "__", "_", "x", "-"]


def _names(rng: random.Random, count: int) -> list[str]:
    drawn = {
        "".join(rng.choice([*PIECES, "."]) + rng.choice(["", "", ".", "-", "_"]) for _ in range(rng.randint(1, 4)))
        for _ in range(count)
    }
    return KNOWN + sorted(drawn - {".", "..", *KNOWN})


def _class_path() -> str:
    jars = [sorted(paths.kafka_lib_dir().glob(f"{stem}-[0-9]*.jar")) for stem in JARS]
    assert all(jars), f"not in {paths.kafka_lib_dir()}: {[s for s, found in zip(JARS, jars) if not found]}"
    return ":".join(str(found[-1]) for found in jars)


@pytest.fixture(scope="module")
def mirror_maker(tmp_path_factory):
    """The profile (every topic included, so that only exclusions leave one out), the names asked, and MirrorMaker
    2's answers: ``defaults``, ``configs`` (name -> copied), ``topics`` (name -> (by default, rendered))."""
    folder = tmp_path_factory.mktemp("mm2-exclusions")
    data = profile_data(folder)
    data["mirror"]["topics"] = {"include": ".*", "grant_all_topics": True}
    profile = load_profile(write_profile(folder, data))
    rendered = folder / "mm2.properties"
    rendered.write_text(mm2_properties(profile, str(rendered)))
    seed = seeds.draw_seed("topic names for MirrorMaker 2's exclusions")
    print(f"seed {seed} (repeat with {seeds.ENV}={seed})")
    names = _names(random.Random(seed), 3000)
    aliases = [profile.source.alias, profile.target.alias]
    assert aliases == ["src", "tgt"]  # as KNOWN names them
    ran = subprocess.run(
        [paths.java_executable(), "-cp", _class_path(), str(PROGRAM), str(rendered), *aliases],
        input="".join(f"{name}\n" for name in names),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    answers = {"defaults": {}, "configs": {}, "topics": {}, "profile": profile, "names": names, "seed": seed}
    for line in ran.stdout.splitlines():
        kind, name, *values = line.split("\t")
        if kind == "default":
            answers["defaults"][name] = values[0].split("|")
        elif kind == "config":
            answers["configs"][name] = values[0] == "true"
        else:
            answers["topics"][name] = tuple(value == "true" for value in values)
    assert list(answers["topics"]) == names, ran.stderr[-4000:]
    return answers


def test_the_configs_left_out_are_mirrormaker_2s_six(mirror_maker):
    assert mirror_maker["defaults"]["config.properties.exclude"] == list(MM2_EXCLUDED_CONFIGS)
    configs = mirror_maker["configs"]
    assert len(configs) > 30 and "min.insync.replicas" in configs
    differ = {name: copied for name, copied in configs.items() if copied == excluded(name, MM2_EXCLUDED_CONFIGS)}
    assert not differ, f"MirrorMaker 2 copies these ({differ}); topic_shape.excluded says otherwise"


def test_every_topic_mirrormaker_2_leaves_out_by_default_the_job_never_selects(mirror_maker):
    selection = mirror_maker["profile"].selection()
    left_out = [name for name, (by_default, _) in mirror_maker["topics"].items() if not by_default]
    assert len(left_out) > 50, f"only {len(left_out)} names drawn that MirrorMaker 2 leaves out"
    selected = [name for name in left_out if selection.matches(name)]
    assert not selected, (
        f"seed {mirror_maker['seed']}: MirrorMaker 2's default topics.exclude "
        f"{mirror_maker['defaults']['topics.exclude']} leaves out {selected[:10]}, which the job would select"
    )


def test_the_rendered_flow_replicates_what_the_job_selects(mirror_maker):
    selection = mirror_maker["profile"].selection()
    topics = mirror_maker["topics"]
    differ = [(name, rendered) for name, (_, rendered) in topics.items() if rendered != selection.matches(name)]
    assert not differ, (
        f"seed {mirror_maker['seed']}: (name, MirrorMaker 2 replicates) where the job differs: {differ[:10]}"
    )
    assert sum(rendered for _, rendered in topics.values()) > 100 < sum(not r for _, r in topics.values())
