"""The sandbox's link (sandbox/wan.py): ``--wan`` read into a round trip and a cap, and the Toxiproxy toxics made of
them; the WAN listener each source broker opens (its advertised port is the proxy's, on the broker's own host name)."""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_mirror.errors import BadInputError
from secure_mirror.sandbox.kafka import Broker
from secure_mirror.sandbox.wan import TC_HANDLE, Link, new_state, ports_needed, root_qdisc_is, shaping, toxics


@pytest.mark.parametrize(
    "text, link",
    [("0", Link(0)), ("50", Link(50)), ("100:200", Link(100, 200.0)), (" 25:0.5 ", Link(25, 0.5))],
)
def test_wan_reads_a_round_trip_and_an_optional_cap(text, link):
    assert Link.parse(text) == link


@pytest.mark.parametrize("bad", ["abc", "", "-5", "50:", "50:0", "10001", "50:100001", "50ms", "50:2:3"])
def test_anything_else_is_one_sentence(bad):
    with pytest.raises(BadInputError, match=r"^--wan .* is not RTT_MS\[:MBIT\]: a round trip of 0 to 10000"):
        Link.parse(bad)


def test_the_round_trip_is_split_over_both_directions_and_the_cap_set_on_each():
    assert toxics(Link(51, 200)) == [
        {
            "name": "latency_upstream",
            "type": "latency",
            "stream": "upstream",
            "attributes": {"latency": 25, "jitter": 0},
        },
        {"name": "bandwidth_upstream", "type": "bandwidth", "stream": "upstream", "attributes": {"rate": 25000}},
        {
            "name": "latency_downstream",
            "type": "latency",
            "stream": "downstream",
            "attributes": {"latency": 26, "jitter": 0},
        },
        {"name": "bandwidth_downstream", "type": "bandwidth", "stream": "downstream", "attributes": {"rate": 25000}},
    ]
    assert toxics(Link(0)) == []
    assert str(Link(100, 200)) == "100 ms round trip, 200 Mbit/s" and Link(100, 200).text == "100:200"


def test_a_cap_tc_makes_is_no_toxic():
    assert [t["type"] for t in toxics(Link(50, 200), cap_each_connection=False)] == ["latency", "latency"]


def test_the_shared_cap_is_one_htb_class_each_way_and_filters_only_the_proxy_ports():
    commands = shaping(200, [9002, 9004])
    assert commands[0] == ["tc", "qdisc", "replace", "dev", "lo", "root", "handle", TC_HANDLE, "htb"]
    assert "default" not in commands[0]  # what no filter takes passes unshaped: the brokers, the tests, the KDC
    classes = [c for c in commands if c[1] == "class"]
    assert [c[c.index("classid") + 1] for c in classes] == [TC_HANDLE + "1", TC_HANDLE + "2"]
    assert all(c[c.index("rate") + 1] == c[c.index("ceil") + 1] == "200000kbit" for c in classes)
    filters = [(c[c.index("match") + 2], c[c.index("match") + 3], c[-1]) for c in commands if c[1] == "filter"]
    assert filters == [
        ("sport", "9002", TC_HANDLE + "1"),
        ("dport", "9002", TC_HANDLE + "2"),
        ("sport", "9004", TC_HANDLE + "1"),
        ("dport", "9004", TC_HANDLE + "2"),
    ]
    burst = int(classes[0][classes[0].index("burst") + 1])
    assert burst == 4 * 65536  # 10 ms of 200 Mbit/s is 250,000 bytes, below four 64 KiB packets
    assert int(shaping(10_000, [1])[1][-3]) == 12_500_000  # 10 ms of 10 Gbit/s


@pytest.mark.parametrize(
    "shown, found",
    [
        ("qdisc noqueue 0: root refcnt 2 \n", "none"),
        ("", "none"),
        (f"qdisc htb {TC_HANDLE} root refcnt 2 r2q 10 default 0\nqdisc pfifo 8001: parent {TC_HANDLE}1\n", "ours"),
        ("qdisc htb 1: root refcnt 2 r2q 10 default 0x30\n", "other"),
        ("qdisc tbf 8002: root refcnt 2 rate 10Mbit\n", "other"),
    ],
)
def test_only_this_sandboxs_root_qdisc_is_replaced_or_removed(shown, found):
    assert root_qdisc_is(shown) == found


def test_the_state_names_each_source_brokers_two_ports():
    assert ports_needed(3) == 7
    state = new_state([9000, 9001, 9002, 9003, 9004, 9005, 9006], [1, 2, 3])
    assert state["api_port"] == 9000
    assert state["brokers"] == {
        "1": {"listener": 9001, "proxy": 9002},
        "2": {"listener": 9003, "proxy": 9004},
        "3": {"listener": 9005, "proxy": 9006},
    }
    assert state["link"] is None and state["pid"] is None


def test_a_source_broker_advertises_its_wan_listener_at_the_proxy_with_the_client_listeners_security(tmp_path):
    broker = Broker(
        name="source",
        base=tmp_path,
        host="kafka.source.test",
        realm="SOURCE.TEST",
        port=9100,
        controller_port=9101,
        krb5_conf=Path("/k"),
        keytab=Path("/kt"),
        keystore=Path("/ks"),
        ca_file=Path("/ca"),
        super_users=["User:kafka"],
        token_key=tmp_path / "token.key",
        wan_port=9200,
        wan_advertised_port=9300,
    )
    settings = broker.properties()
    assert settings["listeners"].endswith(",WAN://kafka.source.test:9200")
    assert settings["advertised.listeners"] == "SECURE://kafka.source.test:9100,WAN://kafka.source.test:9300"
    assert settings["listener.security.protocol.map"].endswith(",WAN:SASL_SSL")
    secure = {
        k[len("listener.name.secure.") :]: v for k, v in settings.items() if k.startswith("listener.name.secure.")
    }
    wan = {k[len("listener.name.wan.") :]: v for k, v in settings.items() if k.startswith("listener.name.wan.")}
    assert wan == secure and "gssapi.sasl.jaas.config" in wan
    assert settings["inter.broker.listener.name"] == "SECURE"
