"""Facts derived from the profile, each computed in one place (the model) and read by every layer."""

from __future__ import annotations

import pytest

from secure_mirror.preflight.checks.base import SideChecks
from secure_mirror.preflight.checks.settings import keytab_file
from secure_mirror.profile.fields import keytab_exposure
from secure_mirror.profile.mirror import keeps_partitions, too_few_partitions
from tests.support import profiles as pf


def test_group_prefix_brokers_and_realm(tmp_path):
    source = pf.gssapi(tmp_path, "source")
    source["bootstrap_servers"] = ["kafka.source.test:9093", "[::1]:9094"]
    profile = pf.load(tmp_path, source=source)
    assert profile.group_prefix == "secure-mirror-src-tgt"
    assert profile.source.brokers == [("kafka.source.test", 9093), ("::1", 9094)]
    assert profile.source.first_broker == "kafka.source.test:9093"
    assert (profile.source.realm, profile.source.sasl.realm, profile.target.realm) == (
        "SOURCE.TEST",
        "SOURCE.TEST",
        "TARGET.TEST",
    )


@pytest.mark.parametrize(
    ("rule", "template", "pieces", "name"),
    [
        ("identity", None, ["", ""], "orders"),
        ("alias_prefix", None, ["src.", ""], "src.orders"),
        ("template", "{target_alias}-{topic}.copy", ["tgt-", ".copy"], "tgt-orders.copy"),
    ],
)
def test_target_topic_naming_from_one_template(tmp_path, rule, template, pieces, name):
    rename = {"rule": rule, **({"template": template} if template else {})}
    profile = pf.load(tmp_path, rename=rename)
    assert profile.target_topic_pieces == pieces
    assert profile.target_topic("orders") == name


@pytest.mark.parametrize(
    ("suffix", "kind", "pem"),
    [(".pem", "PEM", True), (".JKS", "JKS", False), (".p12", "PKCS12", False), (".pfx", "PKCS12", False)],
)
def test_truststore_type_from_the_suffix_whatever_its_case(tmp_path, suffix, kind, pem):
    source = pf.gssapi(tmp_path, "source")
    ca = tmp_path / f"truststore{suffix}"
    ca.write_bytes(b"x")
    source["tls"] = {"ca": str(ca), **({} if pem else {"truststore_password": pf.secret_file(tmp_path / "tp", "pw")})}
    tls = pf.load(tmp_path, source=source).source.tls
    assert tls.truststore_type == kind
    assert tls.pem_ca == (ca if pem else None)


@pytest.mark.parametrize(
    ("mode", "exposed"), [(0o600, False), (0o400, False), (0o640, True), (0o620, True), (0o604, True)]
)
def test_one_keytab_rule_for_validate_and_preflight(tmp_path, mode, exposed):
    keytab = tmp_path / "k.keytab"
    pf.keytab(keytab, mode)
    assert (keytab_exposure(keytab) is not None) == exposed
    run = SideChecks("source")
    keytab_file(run, keytab)
    check = run.checks[0]
    assert check.status == ("warn" if exposed else "pass")
    if exposed:
        assert (
            check.finding == f"keytab {keytab} has mode {mode:04o} (group/others can access it): anyone who reads "
            "it can act as the mirror"
        )
        assert check.fix == f"chmod 0600 {keytab}"


@pytest.mark.parametrize(
    ("policy", "source", "target", "keeps", "refused"),
    [
        (True, 3, 3, True, False),
        (True, 3, 4, True, False),
        (True, 3, 2, True, True),
        ("auto", 3, 3, True, False),
        ("auto", 3, 4, False, False),
        ("auto", 3, 2, False, False),
        (False, 3, 3, False, False),
    ],
)
def test_one_keep_partition_decision_for_the_job_verify_and_preflight(policy, source, target, keeps, refused):
    assert keeps_partitions(policy, source, target) is keeps
    assert too_few_partitions(policy, source, target) is refused
