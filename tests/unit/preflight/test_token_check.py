"""Pre-flight's kafka.delegation_token check: what each answer of the Java probe means, in the words a user sees."""

from __future__ import annotations

from secure_mirror.preflight.checks.connection import java_checks
from secure_mirror.profile import load_profile
from tests.support.profiles import profile_data, write_profile


def _profile(tmp_path):
    data = profile_data(tmp_path, spark={"master": "yarn"})
    data["hadoop"] = {
        "properties": {"core-site.xml": {"fs.defaultFS": "hdfs://nn.source.test:8020"}},
        "principal": "mirror/mirror.source.test@SOURCE.TEST",
        "keytab": str(tmp_path / "source" / "mirror.keytab"),
    }
    data["target"]["executor_auth"] = "delegation_token"
    return load_profile(write_profile(tmp_path, data))


def _token(checks):
    (check,) = [c for c in checks if c.id == "target.kafka.delegation_token"]
    return check


def test_only_token_sides_get_the_check_and_an_unreached_side_is_unverified(tmp_path):
    profile = _profile(tmp_path)
    checks = java_checks(profile, {}, ("source", "target"))
    assert [c.id for c in checks] == ["target.kafka.delegation_token"]
    assert checks[0].status == "unverified"
    assert checks[0].finding.endswith("was not asked: the cluster could not be reached")


def test_a_disabled_broker_fails_with_the_broker_setting_to_fix(tmp_path):
    answer = [
        "ok",
        "id",
        "1",
        "-",
        "token",
        "create",
        "DelegationTokenDisabledException",
        "Delegation Token feature is not enabled",
    ]
    check = _token(java_checks(_profile(tmp_path), {"target": answer}))
    assert check.status == "fail"
    assert (
        check.finding
        == "delegation token, step create: DelegationTokenDisabledException: Delegation Token feature is not enabled"
    )
    assert check.fix.startswith("the brokers do not issue delegation tokens: set delegation.token.secret.key")


def test_a_token_that_cannot_log_in_names_scram(tmp_path):
    answer = ["ok", "id", "1", "-", "token", "login", "SaslAuthenticationException", "invalid credentials"]
    check = _token(java_checks(_profile(tmp_path), {"target": answer}))
    assert check.status == "fail" and "enable SCRAM-SHA-512 on the listener" in check.fix


def test_a_java_client_failure_leaves_the_token_unverified(tmp_path):
    check = _token(java_checks(_profile(tmp_path), {"target": ["error", "SaslAuthenticationException", "x"]}))
    assert check.status == "unverified" and "the Java client could not reach the cluster" in check.finding
