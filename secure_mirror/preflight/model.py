"""The report of a pre-flight: checks with a stable id, a status, a one-line finding and, on failure, the fix.

A missing permission carries the ACL that would grant it, in the format ``render`` writes to
``acls/*.acls.json``, and as the ``kafka-acls`` command a security engineer would run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Final, Literal

from secure_mirror.kafka.acl import Acl

Status = Literal["pass", "warn", "fail", "unverified", "skipped"]
PASS: Final = "pass"
WARN: Final = "warn"  # it works, but weakens the run: --strict refuses it
FAIL: Final = "fail"
# A required permission pre-flight could not ask about (WRITE on a target topic that does not exist yet): not a
# pass. It is proven by the check named in ``proven_by`` passing (the admin audit), or accepted by the user.
UNVERIFIED: Final = "unverified"
SKIPPED: Final = "skipped"  # a prerequisite did not pass (its finding names it): one cause, one failure
STATUSES: tuple[Status, ...] = (PASS, WARN, FAIL, UNVERIFIED, SKIPPED)
PROVE_WITH_AUDIT = (
    "prove it with the admin audit (secure-mirror preflight PROFILE --as-admin ADMIN), or accept it "
    "knowingly (secure-mirror run --accept-unverified)"
)


@dataclass
class Check:
    id: str  # "<side>.<area>.<what>", e.g. source.acl.topic-read
    status: Status
    finding: str
    fix: str = ""
    acls: list[Acl] = field(default_factory=list)  # ACLs that would fix it
    commands: list[str] = field(default_factory=list)  # the same as kafka-acls commands
    details: dict = field(default_factory=dict)
    proven_by: str = ""  # UNVERIFIED: the id of the check whose pass proves it (e.g. target.audit.topic-write)

    @property
    def side(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # how long each part took (``runner.Laps``)

    def ok(self, strict: bool = False, accept_unverified: bool = False) -> bool:
        """No failure (with ``strict``, no warning) and nothing unverified that the audit did not prove (unless
        the user accepts unverified permissions)."""
        bad = (FAIL, WARN) if strict else (FAIL,)
        if any(check.status in bad for check in self.checks):
            return False
        return accept_unverified or not self.unproven()

    def unproven(self) -> list[Check]:
        """UNVERIFIED checks whose ``proven_by`` check did not run and pass."""
        passed = {check.id for check in self.checks if check.status == PASS}
        return [check for check in self.with_status(UNVERIFIED) if check.proven_by not in passed]

    def get(self, check_id: str) -> Check:
        return next(check for check in self.checks if check.id == check_id)

    def passed(self, check_id: str) -> bool:
        return any(check.id == check_id and check.status == PASS for check in self.checks)

    def with_status(self, *statuses: Status) -> list[Check]:
        return [check for check in self.checks if check.status in statuses]

    def missing_acls(self, side: str) -> list[Acl]:
        """Every ACL the failing checks of ``side`` ask for, once each."""
        return list(
            dict.fromkeys(
                acl for check in self.checks if check.side == side and check.status == FAIL for acl in check.acls
            )
        )

    def to_dict(self) -> dict:
        counts = {status: len(self.with_status(status)) for status in STATUSES}
        sides = sorted({check.side for check in self.checks})
        return {
            "ok": self.ok(),
            "unproven": [check.id for check in self.unproven()],
            "counts": counts,
            "checks": [asdict(check) for check in self.checks],
            "missing_acls": {side: [acl.to_dict() for acl in self.missing_acls(side)] for side in sides},
            "seconds": self.seconds,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"
