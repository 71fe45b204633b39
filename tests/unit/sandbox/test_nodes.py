"""Where the sandbox's brokers are (``sandbox up --brokers N``), their settings, and what Kafka's tools answer about
them, without a broker."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from secure_mirror.errors import BadInputError
from secure_mirror.sandbox.kafka import ONE_BROKER_SETTINGS, Broker, cluster_settings
from secure_mirror.sandbox.kafka_tools import parse_quorum_status, parse_transactions, reassignment_json
from secure_mirror.sandbox.nodes import PORTS, Side, check_broker_count, ports_needed, sides_for

# a state.json side as a sandbox wrote it before --brokers existed
OLD_SIDE = {
    "name": "source",
    "realm": "SOURCE.TEST",
    "domain": "source.test",
    "port": 9001,
    "controller_port": 9002,
    "plaintext_port": 9003,
    "ssl_port": 9004,
}


def test_a_state_from_before_brokers_loads_as_one_broker_and_is_saved_as_it_was():
    side = Side.from_state(OLD_SIDE)
    assert side.host == "kafka.source.test" and side.bootstrap == "kafka.source.test:9001"
    assert [(n.node_id, n.host, n.port, n.ssl_port) for n in side.nodes] == [(1, "kafka.source.test", 9001, 9004)]
    assert side.to_state() == OLD_SIDE
    assert Side.from_state({k: v for k, v in OLD_SIDE.items() if k != "ssl_port"}).nodes[0].ssl_port is None


def test_one_broker_keeps_the_ports_and_names_it_always_had():
    ports = list(range(20000, 20000 + PORTS))
    source, target = sides_for(ports, 1)
    assert source.to_state() == {**OLD_SIDE, "port": 20002, "controller_port": 20003, "plaintext_port": 20004,
                                 "ssl_port": 20009}  # fmt: skip
    assert (target.host, target.port, target.ssl_port) == ("kafka.target.test", 20005, 20010)


def test_three_brokers_each_have_a_host_name_and_four_ports_of_their_own():
    ports = list(range(30000, 30000 + ports_needed(3)))
    assert ports_needed(3) == PORTS + 16
    sides = sides_for(ports, 3)
    taken = [p for s in sides for n in s.nodes for p in (n.port, n.controller_port, n.plaintext_port, n.ssl_port)]
    assert len(taken) == len(set(taken)) == 24 and set(taken) <= set(ports[2:5] + ports[5:8] + ports[9:11] + ports[13:])
    source = sides[0]
    assert [n.host for n in source.nodes] == ["kafka-1.source.test", "kafka-2.source.test", "kafka-3.source.test"]
    assert source.bootstrap_servers == [f"kafka-{i}.source.test:{source.node(i).port}" for i in (1, 2, 3)]
    assert source.bootstrap == ",".join(source.bootstrap_servers) and source.host == "kafka-1.source.test"
    assert Side.from_state(source.to_state()) == source
    with pytest.raises(BadInputError, match="the source cluster has no broker with node id 4; its node ids: 1, 2, 3"):
        source.node(4)


@pytest.mark.parametrize("bad", [0, -1, 6])
def test_a_broker_count_out_of_range_is_one_sentence(bad):
    with pytest.raises(BadInputError, match=f"--brokers {bad} is not a broker count from 1 to 5; choose 1 or 3"):
        check_broker_count(bad)


def test_the_cli_refuses_a_broker_count_before_anything_starts(tmp_path):
    for bad in ("0", "six"):
        done = subprocess.run(
            [sys.executable, "-m", "secure_mirror", "sandbox", "up", "--brokers", bad, "--dir", str(tmp_path / "sb")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and f"argument --brokers: '{bad}' is not a broker count from 1 to 5" in done.stderr
        assert "Traceback" not in done.stderr and not (tmp_path / "sb").exists()


def test_three_brokers_replicate_three_times_with_two_in_sync():
    assert cluster_settings(1) == ONE_BROKER_SETTINGS
    three = cluster_settings(3)
    assert {k: three[k] for k in three if "replication" in k or "isr" in k or "insync" in k} == {
        "offsets.topic.replication.factor": "3",
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.min.isr": "2",
        "default.replication.factor": "3",
        "min.insync.replicas": "2",
    }
    assert three["auto.create.topics.enable"] == "false"


def test_a_broker_of_three_names_its_node_id_and_every_voter(tmp_path):
    voters = "1@kafka-1.t:1,2@kafka-2.t:2,3@kafka-3.t:3"
    broker = Broker(
        name="target-2",
        base=tmp_path,
        host="kafka-2.t",
        realm="T",
        port=9,
        controller_port=2,
        krb5_conf=tmp_path / "krb5.conf",
        keytab=tmp_path / "k",
        keystore=tmp_path / "s",
        ca_file=tmp_path / "ca",
        super_users=["User:kafka"],
        node_id=2,
        voters=voters,
        settings=cluster_settings(3),
        token_key=tmp_path / "shared.key",
    )
    props = broker.properties()
    assert (props["node.id"], props["controller.quorum.voters"], props["min.insync.replicas"]) == ("2", voters, "2")
    assert 'principal="kafka/kafka-2.t@T"' in props["listener.name.secure.gssapi.sasl.jaas.config"]
    assert props["delegation.token.secret.key"] == (tmp_path / "shared.key").read_text()
    assert (tmp_path / "shared.key").stat().st_mode & 0o077 == 0


QUORUM = """ClusterId:              AbCdEfGhIjKlMnOpQrStUv
LeaderId:               2
LeaderEpoch:            5
HighWatermark:          812
MaxFollowerLag:         0
MaxFollowerLagTimeMs:   0
CurrentVoters:          [{"id": 1, "directoryId": null, "endpoints": ["CONTROLLER://kafka-1.source.test:40001"]}, \
{"id": 3, "directoryId": null, "endpoints": ["CONTROLLER://kafka-3.source.test:40003"]}, \
{"id": 2, "directoryId": null, "endpoints": ["CONTROLLER://kafka-2.source.test:40002"]}]
CurrentObservers:       []
"""


def test_the_quorum_description_is_read_as_plain_data():
    assert parse_quorum_status(QUORUM) == {
        "cluster_id": "AbCdEfGhIjKlMnOpQrStUv",
        "leader_id": 2,
        "leader_epoch": 5,
        "high_watermark": 812,
        "voters": [1, 2, 3],
        "observers": [],
    }
    older = QUORUM.replace(QUORUM.split("CurrentVoters:")[1].split("\n")[0], "  [1,2,3]")
    assert parse_quorum_status(older)["voters"] == [1, 2, 3]


def test_the_transactions_list_is_read_as_plain_data():
    listed = (
        "TransactionalId       Coordinator ProducerId TransactionState\n"
        "tx-a                  1           7          CompleteCommit  \n"
        "tx-b                  3           9          Ongoing         \n"
    )
    assert parse_transactions(listed) == [
        {"transactional_id": "tx-a", "coordinator": 1, "producer_id": 7, "state": "CompleteCommit"},
        {"transactional_id": "tx-b", "coordinator": 3, "producer_id": 9, "state": "Ongoing"},
    ]
    assert parse_transactions("TransactionalId Coordinator ProducerId TransactionState\n") == []


def _sandbox(tmp_path, brokers: int):
    from secure_mirror.sandbox import Sandbox

    sides = sides_for(list(range(40000, 40000 + ports_needed(brokers))), brokers)
    (tmp_path / "secrets").mkdir()
    for side in ("source", "target"):  # PLAIN's password, which a broker's properties hold
        (tmp_path / "secrets" / f"{side}-mirror.scram-password").write_text("not-a-secret")
    state = {"sides": [s.to_state() for s in sides], "kdc_ports": [1, 2], "pids": {}, "plaintext": False}
    return Sandbox(tmp_path, state | {"corp_kdc_port": 3, "oidc_port": 4, "ticket_lifetime": "10h"})


def test_one_broker_a_side_keeps_its_folder_files_and_pid_name(tmp_path):
    sb = _sandbox(tmp_path, 1)
    (broker,) = sb.brokers("source")
    assert (broker.name, broker.base, broker.host) == ("source", tmp_path / "source", "kafka.source.test")
    assert (broker.keytab, broker.keystore) == (
        tmp_path / "source/broker.keytab",
        tmp_path / "source/broker-keystore.pem",
    )
    assert broker.properties()["controller.quorum.voters"] == f"1@kafka.source.test:{broker.controller_port}"
    assert sb.pid_key("source") == "source" and sb.replication_factor == 1
    assert broker.settings == ONE_BROKER_SETTINGS


def test_three_brokers_a_side_each_have_a_folder_keytab_keystore_and_pid_name_of_their_own(tmp_path):
    sb = _sandbox(tmp_path, 3)
    brokers = sb.brokers("target")
    assert [b.name for b in brokers] == ["target-1", "target-2", "target-3"]
    assert [b.keytab.name for b in brokers] == ["broker-1.keytab", "broker-2.keytab", "broker-3.keytab"]
    assert len({b.keystore for b in brokers}) == len({b.base for b in brokers}) == 3
    assert [b.principal for b in brokers] == [f"kafka/kafka-{i}.target.test@TARGET.TEST" for i in (1, 2, 3)]
    voters = {b.properties()["controller.quorum.voters"] for b in brokers}
    assert voters == {",".join(f"{b.node_id}@{b.host}:{b.controller_port}" for b in brokers)}
    assert {b.token_key for b in brokers} == {tmp_path / "target" / "delegation-token.key"}  # one key a cluster
    assert [sb.pid_key("target", i) for i in (1, 2, 3)] == ["target-1", "target-2", "target-3"]
    assert sb.replication_factor == 3 and sb.broker("target", 2).node_id == 2


def test_brokers_re_authenticate_connections_only_when_the_sandbox_says_so(tmp_path):
    sb = _sandbox(tmp_path, 3)
    assert all("connections.max.reauth.ms" not in b.properties() for b in sb.brokers("source"))  # Kafka's: never
    sb.state["reauth_ms"] = 60000  # `sandbox up --reauth-ms 60000`, as state.json keeps it
    for side in ("source", "target"):
        assert {b.properties()["connections.max.reauth.ms"] for b in sb.brokers(side)} == {"60000"}
    sb.state["reauth_mechanisms"] = ["SCRAM-SHA-512", "SCRAM-SHA-256"]  # delegation tokens' mechanisms alone
    props = sb.broker("source", 2).properties()
    assert {k: v for k, v in props.items() if "reauth" in k} == {
        "listener.name.secure.scram-sha-512.connections.max.reauth.ms": "60000",
        "listener.name.secure.scram-sha-256.connections.max.reauth.ms": "60000",
    }


def test_the_reassignment_file_lists_each_partition_with_its_replicas_in_order():
    text = reassignment_json({("b", 1): [3, 1, 2], ("a", 0): [2, 3, 1]})
    assert json.loads(text) == {
        "version": 1,
        "partitions": [
            {"topic": "a", "partition": 0, "replicas": [2, 3, 1]},
            {"topic": "b", "partition": 1, "replicas": [3, 1, 2]},
        ],
    }
