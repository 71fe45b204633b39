"""Fan-out and aggregation, the topologies MirrorMaker 2's README names, as flows side by side on three clusters: the
sandbox's source (S, alias ``src``), its target (T, ``tgt``) and the old broker (O, ``old``: Kafka 2.2.2 with
ZooKeeper, SASL_PLAINTEXT, ``sandbox up --old-broker``).

Three profiles, each rendered, granted the ACLs it rendered and pre-flighted, then run at once (each job
``--until-caught-up`` on ``local[1]``), provenance headers on:

- fan-out: O -> T and O -> S, one source topic on O, a copy ``old.<topic>`` on each target;
- aggregation: O -> T and S -> T, a topic of the same name on O and S, kept apart on T by the rename
  (``old.<topic>`` and ``src.<topic>``).

Every produced record is in each copy exactly once (by key, value and headers), its ``secure-mirror.*`` headers name
the cluster it came from (alias and Kafka cluster id), its topic, partition, offset and timestamp; verify passes for
each flow.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pytest
import yaml

from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import PASS, run_preflight
from secure_mirror.preflight.model import Report
from secure_mirror.profile import load_profile
from secure_mirror.profile.models import Profile
from secure_mirror.render import render_all
from secure_mirror.sandbox import old_broker
from secure_mirror.sandbox.profile import cluster_dict, profile_dict
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.verify import verify
from tests.support.cluster import consume_to_end, preflight_old_source, topic_acls
from tests.support.mirror_case import CLI, records

# in the default run: 100 s on a quiet 2-CPU machine with the tests' faster Spark starts (tests/support/jvm_starts.py),
# the old broker's start included (the session's, shared with test_old_broker); 5.7 to 8 min as shipped at a load of
# 7 to 17
# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.sandbox, pytest.mark.spark, pytest.mark.slow]
FLOWS = {"O-to-T": ("O", "T"), "O-to-S": ("O", "S"), "S-to-T": ("S", "T")}
FAN_OUT, AGGREGATION = ("O-to-T", "O-to-S"), ("O-to-T", "S-to-T")
PRODUCED = {"O": 40, "S": 30}  # records per source cluster, over 2 partitions
ALIASES = {"O": "old", "S": "src", "T": "tgt"}
SIDES = ("source", "target")


@dataclass
class Flow:
    source: str  # a cluster's letter: O, S or T
    target: str
    profile: Profile
    path: Path
    rendered: Path
    preflight: Report = field(default_factory=Report)


@dataclass
class Topologies:
    topic: str  # the source topic: the same name on O and S
    flows: dict[str, Flow]
    sources: dict[str, list[dict]]  # O's and S's topic as read back (with offsets and timestamps)
    cluster_ids: dict[str, str]
    admins: dict
    copies: dict[str, list[dict]] = field(default_factory=dict)

    def copy(self, name: str) -> list[dict]:
        """The target topic of flow ``name``, read whole once, to each partition's end (so a duplicate is seen)."""
        if name not in self.copies:
            flow = self.flows[name]
            self.copies[name] = self.admins[flow.target](consume_to_end, flow.profile.target_topic(self.topic))
        return self.copies[name]


def _cluster_id(conf: dict) -> str:
    """The cluster id of a metadata answer (every Kafka since 0.10.1; DescribeCluster needs 2.8)."""
    from confluent_kafka.admin import AdminClient

    return AdminClient(conf).list_topics(timeout=30).cluster_id


def _flow(sandbox, folder: Path, clusters: dict, letters: tuple[str, str], include: str, spark_conf: dict) -> Flow:
    """A profile from one cluster to another, its provenance headers on, rendered into ``folder/rendered``."""
    data = profile_dict(sandbox, topics=include)
    data["source"], data["target"] = clusters[letters[0]], clusters[letters[1]]
    data["mirror"].update(
        checkpoint_location=str(folder / "checkpoint"),
        provenance_headers=True,
        spark={"master": "local[1]", "conf": spark_conf},
    )
    folder.mkdir()
    path = folder / "profile.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    profile = load_profile(path)
    render_all(profile, folder / "rendered")
    return Flow(letters[0], letters[1], profile, path, folder / "rendered")


def _grants(flows: dict[str, Flow], prefix: str) -> dict[str, list[dict]]:
    """Per cluster, the ACLs each flow rendered for it, and READ on the flows' copies on it (verify reads the target
    as the mirror)."""
    grants: dict[str, list[dict]] = {letter: [] for letter in ALIASES}
    for flow in flows.values():
        rendered = {side: json.loads((flow.rendered / "acls" / f"{side}.acls.json").read_text()) for side in SIDES}
        grants[flow.source] += rendered["source"]
        grants[flow.target] += rendered["target"]
        grants[flow.target] += topic_acls(flow.profile.target_topic(prefix), "READ", pattern="PREFIXED")
    return grants


def _preflight(flow: Flow) -> Report:
    """Pre-flight as ``run`` does, each ask given 15 s (not 5): three flows' JVMs and brokers share two CPUs here."""
    if flow.source == "O":
        return preflight_old_source(flow.profile, timeout=15.0)
    return run_preflight(flow.profile, timeout=15.0)


def _run_side_by_side(flows: dict[str, Flow], folder: Path) -> None:
    """``secure-mirror run --until-caught-up`` of every flow at once; each must end caught up (exit 0)."""
    started: dict[str, subprocess.Popen] = {}
    logs = {name: folder / name / "run.log" for name in flows}
    try:
        for name, flow in flows.items():
            run_dir = str(folder / name / "run")
            argv = [*CLI, "run", str(flow.path), "--skip-preflight", "--until-caught-up", "--run-dir", run_dir]
            with logs[name].open("w") as log:
                started[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 600
        codes = {name: p.wait(timeout=max(1.0, deadline - time.monotonic())) for name, p in started.items()}
    finally:
        for p in started.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = {name: logs[name].read_text()[-3000:] for name, code in codes.items() if code != 0}
    assert not failed, failed


@pytest.fixture(scope="module")
def topologies(sandbox, old_bootstrap, tmp_path_factory):
    folder = tmp_path_factory.mktemp("topologies")
    admins = {
        "O": old_broker.identity(sandbox, "admin").call,
        "S": partial(sandbox.admin, "source"),
        "T": partial(sandbox.admin, "target"),
    }
    clusters = {
        "O": old_broker.profile_dict(sandbox, old_bootstrap)["source"],
        "S": cluster_dict(sandbox, "source", ALIASES["S"]),
        "T": cluster_dict(sandbox, "target", ALIASES["T"]),
    }
    prefix = f"f{uuid.uuid4().hex[:8]}."
    topic, spark_conf = f"{prefix}orders", sink_conf(folder)
    grants: dict[str, list[dict]] = {}
    try:
        for letter, count in PRODUCED.items():
            admins[letter](admin_ops.create_topics, {topic: 2})
            admins[letter](admin_ops.produce, topic, records(count, 2, letter.lower()))
        flows = {
            name: _flow(sandbox, folder / name, clusters, letters, f"{prefix[:-1]}\\..*", spark_conf)
            for name, letters in FLOWS.items()
        }
        grants = _grants(flows, prefix)
        for letter, acls in grants.items():
            admins[letter](admin_ops.create_acls, acls)
        for flow in flows.values():
            flow.preflight = _preflight(flow)
        _run_side_by_side(flows, folder)
        sources = {letter: admins[letter](consume_to_end, topic) for letter in PRODUCED}
        ids = {letter: admins[letter](_cluster_id) for letter in admins}
        yield Topologies(topic, flows, sources, ids, admins)
    finally:
        for letter, acls in grants.items():
            admins[letter](admin_ops.delete_acls, acls)
        for admin in admins.values():
            mine = [t for t in admin(admin_ops.list_topics) if prefix in t]
            if mine:
                admin(admin_ops.delete_topics, mine)


def _content(record: dict) -> tuple:
    """What a producer wrote: key, value and its own headers (the mirror's ``secure-mirror.*`` left out)."""
    headers = tuple(h for h in record["headers"] or () if not h[0].startswith("secure-mirror."))
    return record["key"], record["value"], headers


def _provenance(record: dict) -> dict[str, str]:
    """The last value of each ``secure-mirror.*`` header (the hop this copy came by)."""
    return {name: value.decode() for name, value in record["headers"] or () if name.startswith("secure-mirror.")}


def _assert_copy(topologies: Topologies, name: str) -> None:
    """Flow ``name``'s copy holds each source record once, each naming its source cluster, topic and position."""
    source = topologies.flows[name].source
    produced = {_content(r): r for r in topologies.sources[source]}
    copy = topologies.copy(name)
    assert len(produced) == PRODUCED[source]  # every produced record is told apart by its content
    assert Counter(map(_content, copy)) == Counter(map(_content, topologies.sources[source])), name
    for record in copy:
        origin = produced[_content(record)]
        assert _provenance(record) == {
            "secure-mirror.cluster": ALIASES[source],
            "secure-mirror.cluster-id": topologies.cluster_ids[source],
            "secure-mirror.topic": topologies.topic,
            "secure-mirror.partition": str(origin["partition"]),
            "secure-mirror.offset": str(origin["offset"]),
            "secure-mirror.timestamp": str(origin["timestamp"]),
        }, name


def test_each_flow_is_pre_flighted_with_the_acls_it_rendered(topologies):
    for name, flow in topologies.flows.items():
        report = flow.preflight
        assert report.ok(accept_unverified=True), f"{name}: {report.to_json()}"
        assert report.get("source.acl.topic-read").status == PASS, f"{name}: {report.to_json()}"
        if flow.source == "O":  # it reports no authorized operations: asked by a fetch, and said so
            assert "older than Kafka 2.3" in report.get("source.acl.topic-read").finding, report.to_json()


def test_fan_out_writes_a_whole_copy_to_each_target(topologies):
    assert {topologies.flows[name].target for name in FAN_OUT} == {"T", "S"}
    for name in FAN_OUT:
        _assert_copy(topologies, name)


def test_aggregation_keeps_each_source_apart_on_the_one_target(topologies):
    names = {topologies.flows[name].profile.target_topic(topologies.topic) for name in AGGREGATION}
    assert names == {f"old.{topologies.topic}", f"src.{topologies.topic}"}
    prefix = topologies.topic.split(".")[0]  # and no other copy: S -> T left O's copy on S (old.<topic>) alone
    assert {t for t in topologies.admins["T"](admin_ops.list_topics) if prefix in t} == names
    assert topologies.cluster_ids["O"] != topologies.cluster_ids["S"]
    for name in AGGREGATION:
        _assert_copy(topologies, name)


def test_verify_passes_for_each_flow(topologies):
    with ThreadPoolExecutor(len(FLOWS)) as pool:  # each asks its clusters in processes of its own
        results = dict(zip(FLOWS, pool.map(verify, [flow.profile for flow in topologies.flows.values()])))
    for name, result in results.items():
        flow = topologies.flows[name]
        assert result.ok and result.to_dict()["source_records"] == PRODUCED[flow.source], f"{name}: {result.text()}"
