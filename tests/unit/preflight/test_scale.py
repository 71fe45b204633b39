"""Pre-flight's decisions over thousands of topics (issue 26: 10,000 topics in under 10 s): the pure functions judge
large generated answers exactly as a plain reading of their rules does, in a pass over the topics; and the creation
requests pre-flight's validate_only asks stay within what Kafka's controller takes in one request. Seeded: the seed is
printed (``SECURE_MIRROR_SEED=N`` repeats a run)."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from secure_mirror.kafka.admin_ops import MAX_RECORDS_PER_REQUEST, record_batches
from secure_mirror.preflight.checks import audit, source, target
from secure_mirror.preflight.model import FAIL, PASS, SKIPPED, UNVERIFIED
from secure_mirror.preflight.probes.api_versions import BrokerApis
from secure_mirror.preflight.runner import Laps
from tests.support import seeds
from tests.unit.preflight.conftest import acl

TOPICS = 10_000


def _rng(what: str) -> random.Random:
    seed = seeds.draw_seed(what)
    print(f"{what}: seed {seed} (repeat with {seeds.ENV}={seed})")
    return random.Random(seed)


# ---- the requests validate_only sends -------------------------------------------------------------------------------
def test_creation_requests_stay_within_the_controllers_records():
    assert record_batches({}) == []
    assert record_batches({"a": 1, "b": 2}, limit=5) == [{"a": 1, "b": 2}]  # 2 + 3 records
    assert record_batches({"a": 1, "b": 2}, limit=4) == [{"a": 1}, {"b": 2}]
    assert record_batches({"a": 1, "b": 1}, limit=4) == [{"a": 1, "b": 1}]
    assert record_batches({"a": 1, "big": 9, "c": 1}, limit=5) == [{"a": 1}, {"big": 9}, {"c": 1}]  # alone, refused
    assert record_batches({"a": 1, "b": 1}, extra=1, limit=5) == [{"a": 1}, {"b": 1}]  # a config record each
    assert record_batches({"a": -1, "b": 0}, limit=4) == [{"a": -1, "b": 0}]  # the broker's default: one at least


def test_generated_creations_are_cut_in_order_and_each_request_fits():
    rng = _rng("record_batches over generated topics")
    topics = {f"t{i:05d}": rng.choice([1, 1, 2, 3, 6, 50]) for i in range(TOPICS)}
    batches = record_batches(topics)
    assert [name for batch in batches for name in batch] == list(topics)
    assert all(sum(1 + p for p in batch.values()) <= MAX_RECORDS_PER_REQUEST for batch in batches)
    assert all(  # no request could have taken the next topic
        sum(1 + p for p in batch.values()) + 1 + topics[next(iter(after))] > MAX_RECORDS_PER_REQUEST
        for batch, after in zip(batches, batches[1:], strict=False)
    )


# ---- the source's access checks ---------------------------------------------------------------------------------------
def _answers(rng: random.Random, old: bool) -> tuple[list[str], dict, dict]:
    """Selected topics, their descriptions and (``old``: brokers before Kafka 2.3, which report no operations, for
    about half of them) their fetch answers."""
    selected = [f"orders.t{i:05d}" for i in range(TOPICS)]
    described, fetched = {}, {}
    for topic in selected:
        roll = rng.random()
        if roll < 0.002:
            described[topic] = {"error": "TOPIC_AUTHORIZATION_FAILED"}
        elif old and roll < 0.5:
            described[topic] = {"partitions": 1, "operations": None}
            fetched[topic] = rng.choice([None, None, None, "TOPIC_AUTHORIZATION_FAILED", "NO_ANSWER"])
        else:
            described[topic] = {"partitions": 1, "operations": ["DESCRIBE", "READ"] if roll < 0.998 else ["DESCRIBE"]}
    return selected, described, fetched


def _expected(selected: list[str], described: dict, fetched: dict) -> tuple[str, list[str], str, list[str]]:
    """The two checks' statuses and the resources they name, by the rules read one topic at a time."""
    no_describe, no_read, unanswered = [], [], []
    for topic in selected:
        answer = described[topic]
        if "error" in answer:
            no_describe.append(topic)
        elif topic in fetched:
            if fetched[topic] == "TOPIC_AUTHORIZATION_FAILED":
                no_read.append(topic)
            elif fetched[topic] is not None:
                unanswered.append(topic)
        elif "READ" not in answer["operations"]:
            no_read.append(topic)
    describe = FAIL if no_describe else PASS
    read = FAIL if no_read else UNVERIFIED if unanswered else PASS if not no_describe else SKIPPED
    return describe, no_describe, read, no_read or unanswered


@pytest.mark.parametrize("round_", range(3))
def test_access_checks_over_10000_generated_topics(source_plan, round_):
    rng = _rng(f"source access checks over {TOPICS} topics, round {round_}")
    selected, described, fetched = _answers(rng, old=round_ % 2 == 1)
    started = time.process_time()
    describe, read = source.access_checks(source_plan, selected, described, fetched)
    spent = time.process_time() - started
    status, no_describe, read_status, no_read = _expected(selected, described, fetched)
    assert (describe.status, read.status) == (status, read_status)
    assert describe.details.get("resources", []) == no_describe[:100]
    if read_status in (FAIL, UNVERIFIED):
        assert read.details["resources"] == no_read[:100]
    assert read.status != PASS or not (no_read or no_describe)  # never a pass for what was not answered
    assert spent < 2, f"{spent:.1f} s of CPU for {TOPICS} topics"


# ---- the audit ----------------------------------------------------------------------------------------------------------
def test_the_audit_over_10000_topics_names_each_deny_and_grants_once(profile, source_plan):
    """The selected topics granted one LITERAL ACL each, some denied by name: the audit names every DENY rule to remove,
    and its grants for topics no rule covers once each."""
    rng = _rng(f"source audit over {TOPICS} topics")
    topics = {f"orders.t{i:05d}": 1 for i in range(TOPICS)}
    denied = sorted(rng.sample(sorted(topics), 30))
    ungranted = sorted(set(rng.sample(sorted(topics), 30)) - set(denied))
    acls = [acl("READ", "TOPIC", t) for t in topics if t not in frozenset(ungranted)]  # the denied ones granted too
    acls += [replace(acl("READ", "TOPIC", t), permission="DENY") for t in denied]
    acls += [acl("DESCRIBE", "TOPIC", "orders.", "PREFIXED"), acl("READ", "GROUP", "secure-mirror-src-tgt", "PREFIXED")]
    started = time.process_time()
    checks = audit.audit_checks(profile, "source", {"topics": topics, "acls": acls}, topics, "10.0.0.5")
    spent = time.process_time() - started
    found = {c.id: c for c in checks}
    read = found["source.audit.topic-read"]
    assert read.status == FAIL
    assert sorted(read.details["denied"]) == sorted(denied + ungranted)[:100]
    assert [rule.resource_name for rule in read.details["deny_rules"]] == denied
    assert read.acls == [acl("READ", "TOPIC", "orders", "PREFIXED")]  # the plan's one grant, named once
    assert found["source.audit.topic-describe"].status == PASS
    assert found["source.audit.group-read"].status == PASS
    assert spent < 5, f"{spent:.1f} s of CPU for {TOPICS} topics"


def test_laps_name_each_wait_and_the_total(monkeypatch):
    clock = iter([10.0, 12.5, 13.0, 13.25])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    laps = Laps()
    laps.add("first-phases", **{"source.first-phase": 2.0})
    laps.add("java.client")
    assert laps.seconds() == {"first-phases": 2.5, "source.first-phase": 2.0, "java.client": 0.5, "total": 3.25}


# ---- the target's topics, described in the first phase where they exist ---------------------------------------------
SEEN = ("visible", "flaky")


class Target:
    """A target cluster's topics as its probes answer them, and the names each ``describe_topics`` asked about."""

    def __init__(self, monkeypatch, states: dict[str, tuple]):
        self.states, self.described = (
            states,
            [],
        )  # name -> ("visible", partitions, ops) | ("hidden",) | ("absent", code)
        admin, asked = target.kafka_admin, target.topic_probes
        monkeypatch.setattr(asked, "list_topics", lambda a: {n: 1 for n, s in states.items() if s[0] in SEEN})
        monkeypatch.setattr(asked, "describe_topics", self.describe)
        monkeypatch.setattr(asked, "validate_create", lambda a, topics: {t: self.create(t) for t in topics})
        monkeypatch.setattr(admin, "Admin", lambda conf, timeout: "admin")
        monkeypatch.setattr(admin, "said", lambda a: [])
        monkeypatch.setattr(asked, "APPEARING_SECONDS", 0)  # a topic found existing is described again once
        monkeypatch.setattr(target, "client_conf", lambda cluster, side: {})
        monkeypatch.setattr(target.tls, "context_for", lambda settings: None)
        monkeypatch.setattr(target.api_versions, "answer", lambda *a: {"apis": BrokerApis({3: (0, 12), 60: (0, 1)})})

    def describe(self, _admin, names):
        self.described.append(list(names))
        found = {}
        for name in names:
            state = self.states.get(name, ("absent", "UNKNOWN_TOPIC_OR_PART"))
            if state[0] == "visible":
                found[name] = {"partitions": state[1], "operations": state[2]}
            elif state[0] == "flaky":  # seen, but its description failed (a leader moving)
                found[name] = {"error": "LEADER_NOT_AVAILABLE"}
            elif state[0] == "hidden":
                found[name] = {"error": "TOPIC_AUTHORIZATION_FAILED"}
            else:
                found[name] = {"error": state[1]}
        return found

    def create(self, name):
        state = self.states.get(name, ("absent", "UNKNOWN_TOPIC_OR_PART"))
        if state[0] != "absent":
            return "TOPIC_ALREADY_EXISTS"
        return "TOPIC_AUTHORIZATION_FAILED" if state[1] == "TOPIC_AUTHORIZATION_FAILED" else None


def test_the_first_phase_describes_only_the_visible_target_topics_the_selection_writes(monkeypatch, profile):
    visible = {
        "src.orders.eu": ("visible", 3, ["DESCRIBE", "WRITE"]),
        "src.payments": ("visible", 2, ["DESCRIBE"]),
        "src.orders.eu.tmp": ("visible", 1, ["DESCRIBE"]),  # excluded by the selection
        "src.other": ("visible", 1, ["DESCRIBE"]),  # not selected
        "orders.eu": ("visible", 1, ["DESCRIBE"]),  # not a renamed name
        "src.": ("visible", 1, ["DESCRIBE"]),
        "src.orders.hidden": ("hidden",),
        "src.orders.us": ("flaky",),  # asked again in the second phase
    }
    asked = Target(monkeypatch, visible)
    known = target.ask_existing(profile, "admin")
    assert asked.described == [["src.orders.eu", "src.payments", "src.orders.us"]]
    assert known == {
        "src.orders.eu": {"partitions": 3, "operations": ["DESCRIBE", "WRITE"]},
        "src.payments": {"partitions": 2, "operations": ["DESCRIBE"]},
    }


@pytest.mark.parametrize("round_", range(3))
def test_checks_from_first_phase_descriptions_are_those_asked_all_at_once(monkeypatch, profile, round_):
    """Generated target clusters (topics that exist and are seen, with or without WRITE, with other partition counts,
    or whose description fails; exist but hidden; absent, creatable or not): the second phase judges the same with
    the first phase's descriptions as without them, and asks the brokers only about the names those do not cover."""
    rng = _rng(f"target topics described in two phases, round {round_}")
    source_topics = {f"orders.t{i:04d}": rng.choice([1, 2, 3]) for i in range(2_000)}
    states: dict[str, tuple] = {}
    for topic, partitions in source_topics.items():
        roll, name = rng.random(), f"src.{topic}"
        if roll < 0.6:
            ops = ["DESCRIBE", "WRITE"] if rng.random() < 0.995 else ["DESCRIBE"]
            states[name] = ("visible", partitions if rng.random() < 0.99 else partitions + 1, ops)
        elif roll < 0.603:
            states[name] = ("flaky",)
        elif roll < 0.605:
            states[name] = ("hidden",)
        elif roll < 0.99:
            states[name] = ("absent", "UNKNOWN_TOPIC_OR_PART")
        else:
            states[name] = ("absent", "TOPIC_AUTHORIZATION_FAILED")
    states["src.other"] = ("visible", 1, ["DESCRIBE"])
    asked = Target(monkeypatch, states)
    at_once = target.target_side(profile, 1.0, source_topics)
    asked.described.clear()
    known = target.ask_existing(profile, "admin")
    in_two = target.target_side(profile, 1.0, source_topics, known)
    assert in_two == at_once
    first, second, *again, own = asked.described
    assert own == ["heartbeats"]  # the mirror's own heartbeats topic, asked on its own
    flaky = {n for n, s in states.items() if s[0] == "flaky"}  # they exist: their description is asked again
    assert [set(names) for names in again] == ([flaky] if flaky else [])
    assert set(first) == {n for n, s in states.items() if s[0] in SEEN and n != "src.other"}
    assert set(second) == {f"src.{t}" for t in source_topics} - set(known)
    assert set(known) == {n for n, s in states.items() if s[0] == "visible" and n != "src.other"}
