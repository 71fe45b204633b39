"""What every concern's checks share: a side's checks in the order they ran, how one is built, and what a broker's
error code says of the permission asked (``meaning``: only the authorizer's refusal names a missing grant)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from secure_mirror.preflight.model import PASS, PROVE_WITH_AUDIT, SKIPPED, UNVERIFIED, WARN, Check, Status
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


# ---- what a broker's error code says of the permission asked --------------------------------------------------------
Meaning = Literal["answered", "refused", "rejected", "unasked"]
ANSWERED: Final = "answered"  # no error, or a fact about the resource: it exists, it does not
REFUSED: Final = "refused"  # the authorizer said no: a grant is missing, or a DENY decides
REJECTED: Final = "rejected"  # authorized, but the brokers' rules refuse the request as asked: no grant would help
UNASKED: Final = "unasked"  # no answer: neither a grant nor its absence is known
AUTHORIZATION_ERRORS: Final = frozenset(
    {
        "TOPIC_AUTHORIZATION_FAILED",
        "GROUP_AUTHORIZATION_FAILED",
        "CLUSTER_AUTHORIZATION_FAILED",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
    }
)
RULE_ERRORS: Final = frozenset(
    {
        "POLICY_VIOLATION",
        "INVALID_TOPIC_EXCEPTION",
        "INVALID_CONFIG",
        "INVALID_PARTITIONS",
        "INVALID_REPLICA_ASSIGNMENT",
    }
)
FACTS: Final = frozenset({"TOPIC_ALREADY_EXISTS", "UNKNOWN_TOPIC_OR_PART", "UNKNOWN_TOPIC_ID", "GROUP_ID_NOT_FOUND"})


def meaning(code: str | None) -> Meaning:
    """What ``code`` (a broker's or librdkafka's error code; None: no error) says of the permission asked, for every
    judge: an authorization error is the authorizer's refusal; a topic policy, an invalid name or config the brokers'
    rules; any other code (_TIMED_OUT, _TRANSPORT, _ALL_BROKERS_DOWN, _AUTHENTICATION: this identity could not log
    in to the broker asked, which ``kafka.brokers`` reports; REQUEST_TIMED_OUT, NETWORK_EXCEPTION,
    BROKER_NOT_AVAILABLE, NOT_CONTROLLER, LEADER_NOT_AVAILABLE, COORDINATOR_NOT_AVAILABLE; INVALID_REPLICATION_FACTOR,
    fewer brokers up than the replication factor; a code not listed here) means the question got no answer."""
    if code is None or code in FACTS:
        return ANSWERED
    if code in AUTHORIZATION_ERRORS:
        return REFUSED
    return REJECTED if code in RULE_ERRORS else UNASKED


# librdkafka names the broker an error is about: "sasl_ssl://kafka-2.example.com:9093/2: SASL authentication error:
# ..." (".../bootstrap: ..." before the metadata numbered it); "3/3 brokers are down" names none.
BROKER_SAID = re.compile(r"(?:[a-z_]+://)?(?P<server>[^\s/]+:\d+)/(?P<node>\d+|bootstrap): (?P<error>.+)")


def brokers_unasked(said: Sequence[str]) -> list[str]:
    """Each broker ``said`` (librdkafka's client-level errors, ``kafka_admin.said``) names, as ``broker 2 (host:port):
    its last error`` (``the broker at host:port`` while no metadata numbered it), in the order first named."""
    brokers: dict[str, tuple[str | None, str]] = {}
    for line in said:
        if found := BROKER_SAID.fullmatch(line):
            node = found["node"] if found["node"].isdigit() else brokers.get(found["server"], (None, ""))[0]
            brokers[found["server"]] = (node, found["error"])
    named = []
    for server, (node, error) in brokers.items():
        who = f"broker {node} ({server})" if node else f"the broker at {server}"
        named.append(f"{who}: {error}")
    return named


def no_answer(codes: Iterable[str], said: Sequence[str] = ()) -> str:
    """Why a question got no answer: the brokers' error codes, and each broker this identity could not ask."""
    why = f"the brokers gave no answer ({', '.join(sorted(set(codes)))})"
    brokers = brokers_unasked(said)
    return f"{why}; this identity could not ask {'; '.join(brokers)}" if brokers else why


def unanswered(
    side: str, what: str, question: str, errors: Mapping[str, str], said: Sequence[str] = (), proven_by: str = ""
) -> Check:
    """``<side>.<what>`` unverified: ``question`` ("whether User:mirror may CREATE orders") got no answer about the
    resources ``errors`` names (name -> the brokers' error code, ``meaning``: unasked), never a refusal; the audit check
    ``proven_by`` (none: no audit evaluates it) proves it."""
    again = f"run pre-flight again once every {side} broker answers ({side}.kafka.brokers names those that do not)"
    fix = f"{again}, or " + (
        PROVE_WITH_AUDIT if proven_by else "accept it knowingly (secure-mirror run --accept-unverified)"
    )
    finding = f"{question} is not known: {no_answer(errors.values(), said)}"
    return check(side, what, UNVERIFIED, finding, fix, proven_by=proven_by, details={"resources": sorted(errors)[:100]})
