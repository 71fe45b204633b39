"""Run the checks of both sides, each identity in its own worker process, and collect one report.

Source and target run side by side (their first phases in parallel); the target's second phase needs the
source's topic list to name the target topics. A side that fails, or does not answer before its deadline,
never stops the other side's checks. What does not wait on another part starts at once: the JVM of the Java client
probe (its start and compilation take seconds) and, with ``--as-admin``, the admin's reading of topics and ACLs;
a side is sent to the Java client as soon as librdkafka reached it, and the Java client is asked while the target's
topics are. A worker whose work is done ends in the background. The report's ``seconds`` say where the time went.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from multiprocessing.connection import wait

from secure_mirror.identities import Identities
from secure_mirror.kafka.processes import IdentityProcess, ProcessError, ProcessTimeout
from secure_mirror.preflight.checks import audit, connection, consumer_access, settings
from secure_mirror.preflight.checks.sides import SideFacts, connect_phase, topics_phase
from secure_mirror.preflight.checks.target import target_side
from secure_mirror.preflight.model import FAIL, SKIPPED, Check, Report
from secure_mirror.preflight.probes import java_client
from secure_mirror.profile.cluster import SIDES, Cluster, Side
from secure_mirror.profile.models import Profile

DEFAULT_TIMEOUT = 5.0
STARTUP_S = 20.0  # spawning a worker and importing confluent-kafka and gssapi on a slow machine


def run_preflight(
    profile: Profile,
    *,
    sides: tuple[Side, ...] = SIDES,
    timeout: float = DEFAULT_TIMEOUT,
    admin: dict[Side, Cluster] | None = None,
    identities: Identities | None = None,
) -> Report:
    """Every check for ``sides``; with ``admin`` (side -> the admin's Cluster) also the ACL audit. The report's
    ``seconds`` say how long the runner waited for each part (``Laps``). Its workers act in ``identities``' folder
    (left open: the caller's, as the cut-over hands down its one set), or in a set of its own, closed at the end."""
    laps = Laps()
    with ExitStack() as stack:
        if identities is None:
            identities = stack.enter_context(Identities.for_profile(profile, prefix="secure-mirror-preflight-"))
        krb5_conf, deadline = identities.krb5_config, STARTUP_S + 12 * timeout
        mirror = {side: identities.process(side) for side in _needed(sides)}
        for side, w in mirror.items():
            w.submit(connect_phase, profile, side, timeout, krb5_conf)
        admins = _start_audit(admin or {}, sides, identities, timeout)  # the admin's inventory is read meanwhile
        # the Java client the job uses starts now, beside the first phases; it is sent each side librdkafka reached
        jvm = stack.enter_context(java_client.Started(profile, krb5_conf, timeout))
        facts, seconds = _first_phases(profile, mirror, deadline, sides, jvm)
        laps.add("first-phases", **seconds)
        report = Report([c for side in sides for c in facts[side].checks] + [settings.profile_settings(profile)])
        reached: list[Side] = [side for side in sides if _reached(sides, side, facts[side])]
        source_topics = facts["source"].topics if "source" in facts else None
        target = _submit_target(profile, mirror.get("target"), facts.get("target"), source_topics, timeout, sides)
        if "source" in mirror:
            mirror["source"].release()  # its work is done: it ends while the rest runs
        # the Java client on the sides librdkafka reached (one cause, one failure) while the target's topics are asked
        report.checks += connection.java_client_checks(profile, reached, krb5_conf, timeout, sides, jvm)
        laps.add("java.client")
        report.checks += target(deadline)
        laps.add("target.topics")
        for w in mirror.values():
            w.release()
        if admin:
            report.checks += _audit(profile, admins, deadline, facts, report)
            laps.add("audit")
        for w in admins.values():  # ended now, not when the identities close (a caller's may stay open long)
            w.release()
        report.seconds = laps.seconds()
        return report


class Laps:
    """How long the runner waited for each part, in order (parts that ran beside others are hidden in their wait),
    plus the durations the workers measured themselves, and the total."""

    def __init__(self) -> None:
        self.started = self.last = time.monotonic()
        self.parts: dict[str, float] = {}

    def add(self, part: str, **measured: float) -> None:
        now = time.monotonic()
        self.parts[part] = now - self.last
        self.parts.update(measured)
        self.last = now

    def seconds(self) -> dict[str, float]:
        return {**{k: round(v, 3) for k, v in self.parts.items()}, "total": round(time.monotonic() - self.started, 3)}


def _first_phases(
    profile: Profile,
    mirror: dict[Side, IdentityProcess],
    deadline: float,
    sides: tuple[Side, ...],
    jvm: java_client.Started,
) -> tuple[dict[Side, SideFacts], dict[str, float]]:
    """Each side's first phase, and how long its parts took: the connections (``connect_phase``, asked of both sides
    at once), then each side's topics (``topics_phase``, asked as soon as its connection passed). A side librdkafka
    reached is sent to the Java client as soon as that is known, while the rest runs."""
    facts: dict[Side, SideFacts] = {}
    seconds: dict[str, float] = {}
    waiting: dict[tuple[Side, str], IdentityProcess] = {(side, "connect"): w for side, w in mirror.items()}
    end = time.monotonic() + deadline
    while waiting:
        ready = wait([w.conn for w in waiting.values()], max(0.0, end - time.monotonic()))
        for (side, step), w in list(waiting.items()):
            if ready and w.conn not in ready:
                continue  # (nothing ready: the deadline passed, and every step left says so)
            del waiting[(side, step)]
            answer = _result(w, side, max(0.0, end - time.monotonic()))
            seconds[f"{side}.{step}-phase"] = round(answer.seconds, 3)
            if step == "topics":
                facts[side].checks += answer.checks
                facts[side].topics, facts[side].described = answer.topics, answer.described
                continue
            facts[side] = answer
            if _reached(sides, side, answer):
                jvm.send(side)
            if answer.connected:
                w.submit(topics_phase, profile, side)
                waiting[(side, "topics")] = w
    return {side: facts[side] for side in mirror}, seconds


def _reached(sides: tuple[Side, ...], side: Side, facts: SideFacts) -> bool:
    """Whether librdkafka connected to ``side`` (one of those asked) and no broker it names refused it: only then is
    the Java client tried there (it would meet the refusing broker too: one cause, one failure)."""
    refused = any(c.id == f"{side}.kafka.brokers" and c.status == FAIL for c in facts.checks)
    return side in sides and Report(facts.checks).passed(f"{side}.kafka.connect") and not refused


def _needed(sides: tuple[Side, ...]) -> tuple[Side, ...]:
    """The target's topic names come from the source's topics: checking the target needs the source listed."""
    return SIDES if "target" in sides else sides


def _result(w: IdentityProcess, side: str, deadline: float) -> SideFacts:
    try:
        return w.result(deadline)
    except ProcessTimeout as exc:
        return SideFacts(
            [
                Check(
                    f"{side}.preflight.deadline",
                    FAIL,
                    f"the {side} checks gave no answer: {exc}",
                    "raise --timeout, or check the KDC and brokers of this side answer",
                )
            ]
        )
    except ProcessError as exc:
        return SideFacts(
            [
                Check(
                    f"{side}.preflight.error",
                    FAIL,
                    f"the {side} checks stopped: {exc}",
                    "report this with the profile (without secrets)",
                )
            ]
        )


def _submit_target(
    profile: Profile, w: IdentityProcess | None, target: SideFacts | None, source_topics, timeout: float, sides
) -> Callable[[float], list[Check]]:
    """Ask the target's worker for its topic checks (once the source's topics are known); the function that waits
    for them (given the deadline)."""
    if "target" not in sides or w is None or target is None or not Report(target.checks).passed("target.kafka.connect"):
        return lambda _deadline: []
    if not source_topics:
        skipped = Check(
            "target.topics.names", SKIPPED, "skipped: needs the source's topic list (source.topics.selection)"
        )
        return lambda _deadline: [skipped]
    w.submit(target_side, profile, timeout, source_topics, target.described)
    return lambda deadline: _target_topics(w, deadline)


def _target_topics(w: IdentityProcess, deadline: float) -> list[Check]:
    try:
        return w.result(deadline)
    except ProcessError as exc:
        return [
            Check(
                "target.preflight.error",
                FAIL,
                f"the target topic checks stopped: {exc}",
                "raise --timeout, or check the target brokers answer",
            )
        ]


def _start_audit(
    admin: dict[Side, Cluster], sides, identities: Identities, timeout: float
) -> dict[Side, IdentityProcess]:
    """The admin identity's processes, each asked at once for every topic and ACL of its cluster."""
    admins = {side: identities.process(side, "admin") for side in sides if side in admin}
    for side, w in admins.items():
        w.submit(audit.collect, admin[side], side, timeout)
    return admins


def _audit(
    profile: Profile, admins: dict[Side, IdentityProcess], deadline: float, facts, report: Report
) -> list[Check]:
    """The audit of each side from what its admin worker read, judged against the mirror's checks, and (the target
    audited) the consumers' access after failover from both sides' inventories."""
    data = {}
    for side, w in admins.items():
        try:
            data[side] = w.result(deadline)
        except ProcessError as exc:
            data[side] = {"error": str(exc)}
    source_all = data.get("source", {}).get("topics") or (facts["source"].topics if "source" in facts else {}) or {}
    checks = [c for side in admins for c in audit.audit_side(profile, side, data[side], source_all, report.checks)]
    if "target" in admins:  # the consumers' access after failover, from the same inventories
        checks.append(consumer_access.consumer_access(profile, data.get("source"), data["target"]))
    return checks
