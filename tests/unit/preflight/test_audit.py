"""The audit's evaluation (pure): a grant limited to one host is valid for that host only."""

from __future__ import annotations

from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.audit import audit_checks
from secure_mirror.profile import load_profile
from tests.support import profiles as pf


def _acl(operation, name, host="*", resource_type="TOPIC", pattern="LITERAL"):
    return Acl(
        principal="User:mirror",
        host=host,
        operation=operation,
        resource_type=resource_type,
        resource_name=name,
        pattern_type=pattern,
    )


def test_a_grant_for_one_host_is_reported_as_valid_for_that_host_only(tmp_path):
    data = pf.profile_data(tmp_path, source=pf.password(tmp_path, "source", "SCRAM-SHA-512"))
    data["mirror"]["topics"] = {"include": "payments"}
    profile = load_profile(pf.write_profile(tmp_path, data))
    acls = [
        _acl("READ", "payments", host="10.0.0.5"),
        _acl("DESCRIBE", "payments"),
        _acl("READ", "secure-mirror-src-tgt", resource_type="GROUP", pattern="PREFIXED"),
    ]
    checks = {
        c.id: c
        for c in audit_checks(profile, "source", {"topics": {"payments": 1}, "acls": acls}, {"payments": 1}, "10.0.0.5")
    }
    read = checks["source.audit.topic-read"]
    assert read.status == "warn" and "from 10.0.0.5 only (valid for this host only)" in read.finding
    assert "--allow-host '*'" in read.fix
    elsewhere = {
        c.id: c
        for c in audit_checks(profile, "source", {"topics": {"payments": 1}, "acls": acls}, {"payments": 1}, "10.0.0.9")
    }
    assert elsewhere["source.audit.topic-read"].status == "fail"
