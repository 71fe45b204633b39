"""The test bed itself, against the real KDC and brokers: two identities in two realms, ACLs enforced,
SCRAM, TLS trust, and the sandbox's own bad-input behaviour."""

from __future__ import annotations

import subprocess

import pytest
from confluent_kafka import KafkaException

from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.processes import IsolatedCallError, call_kept
from secure_mirror.sandbox import Sandbox, procs
from tests.support.cluster import granted, group_acls, plain_records, topic_acls, unique

pytestmark = pytest.mark.sandbox


def _cache_principals(ccdir) -> list[str]:
    """The default principal of every credential cache in a DIR: collection, one per cache file."""
    found = []
    for cache in sorted(ccdir.glob("tkt*")):
        out = subprocess.run(["klist", "-c", f"FILE:{cache}"], capture_output=True, text=True, check=True).stdout
        found += [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("Default principal")]
    return found


def test_two_identities_in_two_realms_from_one_python_process(sandbox, tmp_path, monkeypatch):
    src, tgt = unique("demo.two"), unique("src.demo.two")
    sandbox.admin("source", admin_ops.create_topics, {src: 2})
    sandbox.admin("target", admin_ops.create_topics, {tgt: 2})
    ccdir = tmp_path / "ccache"
    ccdir.mkdir(mode=0o700)
    env = {"KRB5_CONFIG": str(sandbox.krb5_conf), "KRB5CCNAME": f"DIR:{ccdir}"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with (
        granted(sandbox, "source", topic_acls(src, "READ", "WRITE", "DESCRIBE") + group_acls("check")),
        granted(sandbox, "target", topic_acls(tgt, "READ", "WRITE", "DESCRIBE") + group_acls("check")),
    ):
        admin_ops.produce(sandbox.client_conf("source"), src, plain_records(5, "s"))
        admin_ops.produce(sandbox.client_conf("target"), tgt, plain_records(3, "t"))
        got_src = admin_ops.consume(sandbox.client_conf("source"), src, max_records=5, group_id="check")
        got_tgt = admin_ops.consume(sandbox.client_conf("target"), tgt, max_records=3, group_id="check")
    assert sorted(r["key"] for r in got_src) == [f"s-{i}".encode() for i in range(5)]
    assert sorted(r["key"] for r in got_tgt) == [f"t-{i}".encode() for i in range(3)]
    # Each identity got its own cache in the collection: no ticket cache is shared between them.
    principals = _cache_principals(ccdir)
    assert sorted(principals) == sorted(
        [sandbox.sides["source"].mirror_principal, sandbox.sides["target"].mirror_principal]
    )


def test_authorization_is_enforced_until_an_acl_grants_it(sandbox):
    topic, group = unique("sbx.acl"), unique("sbx-check")  # names no other test's ACL can cover
    sandbox.admin("source", admin_ops.create_topics, {topic: 1})
    with pytest.raises(IsolatedCallError) as refused:
        sandbox.as_mirror("source", admin_ops.produce, topic, plain_records(1))
    assert "TOPIC_AUTHORIZATION_FAILED" in str(refused.value) or refused.value.code == "TOPIC_AUTHORIZATION_FAILED"
    with granted(sandbox, "source", topic_acls(topic, "WRITE", "READ", "DESCRIBE") + group_acls(group)):
        assert sandbox.as_mirror("source", admin_ops.produce, topic, plain_records(4)) == 4
        got = sandbox.as_mirror("source", admin_ops.consume, topic, max_records=4, group_id=group)
    assert len(got) == 4
    with pytest.raises(IsolatedCallError) as again:  # and refused again by the authorizer once the ACLs are gone
        sandbox.as_mirror("source", admin_ops.consume, topic, max_records=1, group_id=group, timeout=10)
    assert again.value.code in ("TOPIC_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED"), again.value


def test_scram_sha_512_user_created_on_the_broker_authenticates(sandbox):
    topic = unique("src.demo.scram")
    sandbox.admin("target", admin_ops.create_topics, {topic: 1})
    conf = sandbox.client_conf("target", mechanism="SCRAM-SHA-512")
    conf |= {"sasl.username": "mirror", "sasl.password": sandbox.scram_password_file("target").read_text()}
    with granted(sandbox, "target", topic_acls(topic, "WRITE", "DESCRIBE")):
        assert admin_ops.produce(conf, topic, plain_records(2)) == 2
    bad = conf | {"sasl.password": "not-the-password"}
    with pytest.raises(KafkaException, match="(?i)authenticat"):
        admin_ops.produce(bad, topic, plain_records(1), timeout=15)


def test_tls_verification_fails_against_a_wrong_ca(sandbox):
    env = sandbox.identity_env("source", "admin")
    conf = sandbox.client_conf("source", "admin")
    assert isinstance(call_kept(env, admin_ops.list_topics, conf, timeout=15), dict)
    wrong = conf | {"ssl.ca.location": str(sandbox.wrong_ca_file)}
    with pytest.raises(IsolatedCallError):
        call_kept(env, admin_ops.list_topics, wrong, timeout=8)


def test_up_twice_in_the_same_folder_is_refused_and_starts_nothing(sandbox):
    before = procs.pid_alive(sandbox.state["pids"]["source"])
    with pytest.raises(BadInputError, match="already running"):
        Sandbox.up(sandbox.base)
    assert before and all(sandbox.alive().values())


def test_port_in_use_is_refused_with_one_sentence_and_nothing_left_running(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(EnvironmentNotReady, match=f"port {port} is already in use"):
            Sandbox.up(tmp_path / "sb", port_base=port)
    assert not (tmp_path / "sb").exists()


def test_missing_kafka_jars_are_named_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("SECURE_MIRROR_DEPS", str(tmp_path / "empty-deps"))
    with pytest.raises(EnvironmentNotReady, match="Kafka broker jars are missing.*run scripts/setup"):
        Sandbox.up(tmp_path / "sb")
    assert not (tmp_path / "sb").exists()


def test_sandbox_cli_reports_bad_input_in_one_sentence(tmp_path):
    from secure_mirror.cli import main

    assert main(["sandbox", "status", "--dir", str(tmp_path / "nothing")]) == 2
