"""What every concern's checks share: a side's checks in the order they ran, and how one is built."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from secure_mirror.preflight.model import PASS, SKIPPED, UNVERIFIED, WARN, Check, Status
from secure_mirror.profile import Side
from secure_mirror.profile.cluster import Cluster
from secure_mirror.render import librdkafka
from secure_mirror.render.acls import AclPlan

OK: tuple[Status, ...] = (PASS, WARN)


def check(side: str, what: str, status: Status, finding: str, fix: str = "", **extra: Any) -> Check:
    """The check ``<side>.<what>``."""
    return Check(f"{side}.{what}", status, finding, fix, **extra)


@dataclass
class SideChecks:
    """The checks of one side, in the order they ran."""

    side: Side
    checks: list[Check] = field(default_factory=list)

    def add(self, what: str, status: Status, finding: str, fix: str = "", **extra: Any) -> Check:
        return self.extend(check(self.side, what, status, finding, fix, **extra))

    def extend(self, *checks: Check | None) -> Check:
        """Record judged checks (None: nothing to report); the last one recorded."""
        self.checks.extend(c for c in checks if c is not None)
        return self.checks[-1]

    def status(self, what: str) -> Status | None:
        return next((c.status for c in self.checks if c.id == f"{self.side}.{what}"), None)

    def blocked(self, what: str, *needs: str) -> bool:
        """Record ``what`` as skipped when one of ``needs`` ran and did not pass (checks that did not run are fine)."""
        failed = [n for n in needs if self.status(n) not in (None, *OK)]
        if failed:
            self.add(what, SKIPPED, f"skipped: needs {self.side}.{failed[0]} to pass")
        return bool(failed)


def client_conf(cluster: Cluster, side: Side) -> dict[str, str]:
    """The librdkafka configuration of the job's identity: exactly what the renderer produces."""
    return librdkafka.identity(cluster, side).conf


def planned(plan: AclPlan, operations: tuple[str, ...], resource_type: str, names: Iterable[str]) -> list[str]:
    """``names``, once ``plan`` holds each of ``operations`` on every one (``NotPlanned`` otherwise): pre-flight asks
    the brokers about nothing the identity's ACL plan does not grant."""
    names = list(names)
    for operation in operations:
        plan.need(operation, resource_type, names)
    return names


def listed(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def undescribed(side: Side, what: str, principal: str, errors: dict[str, str]) -> Check:
    """``<side>.<what>`` unverified: the topics (name -> the brokers' error) exist, as a validate-only create says,
    but the brokers did not describe them, with another error than a refusal (a partition without a leader, say),
    however long they were asked; whether ``principal`` may DESCRIBE them is not known."""
    names = sorted(errors)
    finding = (
        f"{len(names)} topic(s) exist but the brokers did not describe them ({listed(names)}: {errors[names[0]]}); "
        f"whether {principal} may DESCRIBE them is not known"
    )
    fix = "run pre-flight again once the brokers describe these topics (kafka-topics.sh --describe, as an admin)"
    return check(side, what, UNVERIFIED, finding, fix, details={"resources": names})
