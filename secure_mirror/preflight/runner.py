"""Run the checks of both sides, each identity in its own worker process, and collect one report.

Source and target run side by side (their first phases in parallel); the target's second phase needs the
source's topic list to name the target topics. A side that fails, or does not answer before its deadline,
never stops the other side's checks.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path

from secure_mirror.kafka.identity import kerberos_env
from secure_mirror.preflight.checks import audit, connection, settings
from secure_mirror.preflight.checks.sides import SideFacts, first_phase, second_phase
from secure_mirror.preflight.model import FAIL, SKIPPED, Check, Report
from secure_mirror.preflight.workers import Worker, WorkerError, WorkerTimeout
from secure_mirror.profile.models import SIDES, Cluster, Profile, Side
from secure_mirror.render import krb5

DEFAULT_TIMEOUT = 5.0
STARTUP_S = 20.0  # spawning a worker and importing confluent-kafka and gssapi on a slow machine


def run_preflight(
    profile: Profile,
    *,
    sides: tuple[Side, ...] = SIDES,
    timeout: float = DEFAULT_TIMEOUT,
    admin: dict[Side, Cluster] | None = None,
) -> Report:
    """Every check for ``sides``; with ``admin`` (side -> the admin's Cluster) also the ACL audit."""
    with tempfile.TemporaryDirectory(prefix="secure-mirror-preflight-") as tmp, ExitStack() as stack:
        krb5_conf = krb5.write_into(profile, Path(tmp))
        deadline = STARTUP_S + 12 * timeout

        def worker(name: str) -> Worker:
            w = Worker(kerberos_env(krb5_conf, f"{Path(tmp) / name}.ccache"))  # librdkafka's kinit fills it
            stack.callback(w.close)
            return w

        mirror = {side: worker(f"{side}-mirror") for side in _needed(sides)}
        for side, w in mirror.items():
            w.submit(first_phase, profile, side, timeout, krb5_conf)
        facts = {side: _result(w, side, deadline) for side, w in mirror.items()}
        report = Report([c for side in sides for c in facts[side].checks] + [settings.profile_settings(profile)])
        reached: list[Side] = [side for side in sides if report.passed(f"{side}.kafka.connect")]
        # the Java client the job uses, on the sides librdkafka reached (one cause, one failure); delegation tokens
        report.checks += connection.java_client_checks(profile, reached, Path(tmp), krb5_conf, timeout, sides)
        source_topics = facts["source"].topics if "source" in facts else None
        if "target" in sides:
            report.checks += _target_topics(
                profile, mirror["target"], facts["target"], source_topics, timeout, deadline
            )
        if admin:
            report.checks += _audit(profile, sides, admin, worker, timeout, deadline, facts, report)
        return report


def _needed(sides: tuple[Side, ...]) -> tuple[Side, ...]:
    """The target's topic names come from the source's topics: checking the target needs the source listed."""
    return SIDES if "target" in sides else sides


def _result(w: Worker, side: str, deadline: float) -> SideFacts:
    try:
        return w.result(deadline)
    except WorkerTimeout as exc:
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
    except WorkerError as exc:
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


def _target_topics(
    profile: Profile, w: Worker, target: SideFacts, source_topics, timeout: float, deadline: float
) -> list[Check]:
    if not Report(target.checks).passed("target.kafka.connect"):
        return []
    if not source_topics:
        return [
            Check("target.topics.names", SKIPPED, "skipped: needs the source's topic list (source.topics.selection)")
        ]
    w.submit(second_phase, profile, timeout, source_topics)
    try:
        return w.result(deadline)
    except (WorkerTimeout, WorkerError) as exc:
        return [
            Check(
                "target.preflight.error",
                FAIL,
                f"the target topic checks stopped: {exc}",
                "raise --timeout, or check the target brokers answer",
            )
        ]


def _audit(
    profile: Profile, sides, admin: dict[Side, Cluster], worker, timeout: float, deadline: float, facts, report: Report
) -> list[Check]:
    admins = {side: worker(f"{side}-admin") for side in sides if side in admin}
    for side, w in admins.items():
        w.submit(audit.collect, admin[side], side, timeout)
    data = {}
    for side, w in admins.items():
        try:
            data[side] = w.result(deadline)
        except (WorkerTimeout, WorkerError) as exc:
            data[side] = {"error": str(exc)}
    source_all = data.get("source", {}).get("topics") or (facts["source"].topics if "source" in facts else {}) or {}
    return [c for side in admins for c in audit.audit_side(profile, side, data[side], source_all, report.checks)]
