"""Where the sandbox's brokers are: a side's facts (realm, domain) and its brokers' host names and ports, as
state.json keeps them. One broker a side is ``kafka.<domain>``, as it always was; ``--brokers N`` (N > 1) gives each
broker a name of its own, ``kafka-<node id>.<domain>``, which ``scripts/setup`` adds to /etc/hosts."""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass, field

from secure_mirror.errors import BadInputError, EnvironmentNotReady

PORTS = 13  # 2 KDC ports, 3 per broker, the corporate KDC, an SSL listener per broker, the identity provider (2)
PORTS_PER_BROKER = 4  # SASL_SSL, controller, PLAINTEXT (when asked), SSL with client certificates
MAX_BROKERS = 5  # scripts/setup adds kafka-1 .. kafka-5 of each side to /etc/hosts
SIDE_FACTS = (("source", "SOURCE.TEST", "source.test"), ("target", "TARGET.TEST", "target.test"))


class Endpoint:
    """Where clients reach a broker: its SASL_SSL listener (``host`` and ``port`` are the subclass's fields or
    properties)."""

    host: str
    port: int

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Node(Endpoint):
    """One broker of a side: its KRaft node id, host name and ports."""

    node_id: int
    host: str
    port: int  # SASL_SSL
    controller_port: int
    plaintext_port: int  # opened only when the sandbox is started with plaintext
    ssl_port: int | None  # the SSL listener with client certificates (a sandbox from before it has none)

    @property
    def ssl_bootstrap(self) -> str:
        return f"{self.host}:{self.ssl_port}"


@dataclass(frozen=True)
class Side:
    """The facts of one cluster of the sandbox, as clients need them. ``port`` .. ``ssl_port`` are the first
    broker's (the only one's, with one broker); ``nodes`` lists every broker."""

    name: str
    realm: str
    domain: str
    port: int
    controller_port: int
    plaintext_port: int
    ssl_port: int | None = None
    nodes: tuple[Node, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.nodes:  # one broker (a state.json from before --brokers has no "nodes")
            one = Node(1, f"kafka.{self.domain}", self.port, self.controller_port, self.plaintext_port, self.ssl_port)
            object.__setattr__(self, "nodes", (one,))

    @classmethod
    def from_state(cls, data: dict) -> Side:
        nodes = tuple(Node(**n) for n in data.get("nodes", ()))
        return cls(**{**data, "nodes": nodes})

    def to_state(self) -> dict:
        """As state.json keeps it: with one broker exactly as before --brokers existed (no "nodes")."""
        data = asdict(self)
        if len(self.nodes) == 1:
            del data["nodes"]
        else:
            data["nodes"] = [asdict(n) for n in self.nodes]
        return data

    @property
    def host(self) -> str:
        """The first broker's host name (``kafka.<domain>`` with one broker)."""
        return self.nodes[0].host

    @property
    def bootstrap_servers(self) -> list[str]:
        return [n.bootstrap for n in self.nodes]

    @property
    def bootstrap(self) -> str:
        """Every broker, comma-separated, as Kafka's clients and tools read ``bootstrap.servers``."""
        return ",".join(self.bootstrap_servers)

    @property
    def ssl_bootstrap(self) -> str:
        return ",".join(n.ssl_bootstrap for n in self.nodes)

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        known = ", ".join(str(n.node_id) for n in self.nodes)
        raise BadInputError(f"the {self.name} cluster has no broker with node id {node_id}; its node ids: {known}")

    @property
    def mirror_principal(self) -> str:
        return f"mirror/mirror.{self.domain}@{self.realm}"

    @property
    def admin_principal(self) -> str:
        return f"admin@{self.realm}"


def check_broker_count(brokers: int) -> int:
    if not 1 <= brokers <= MAX_BROKERS:
        raise BadInputError(f"--brokers {brokers} is not a broker count from 1 to {MAX_BROKERS}; choose 1 or 3")
    return brokers


def ports_needed(brokers: int) -> int:
    """How many ports a sandbox of ``brokers`` brokers a side takes (``PORTS`` for one broker)."""
    return PORTS + 2 * PORTS_PER_BROKER * (check_broker_count(brokers) - 1)


def host_name(domain: str, node_id: int, brokers: int) -> str:
    return f"kafka.{domain}" if brokers == 1 else f"kafka-{node_id}.{domain}"


def sides_for(ports: list[int], brokers: int) -> list[Side]:
    """Both sides on ``ports`` (``ports_needed(brokers)`` of them): the first broker of each side on the places one
    broker always had, every further broker on four ports of its own after them."""
    first = {"source": (ports[2], ports[3], ports[4], ports[9]), "target": (ports[5], ports[6], ports[7], ports[10])}
    sides = []
    for index, (name, realm, domain) in enumerate(SIDE_FACTS):
        nodes = [Node(1, host_name(domain, 1, brokers), *first[name])]
        for node_id in range(2, brokers + 1):
            at = PORTS + PORTS_PER_BROKER * (2 * (node_id - 2) + index)
            port, controller, plaintext, ssl = ports[at : at + PORTS_PER_BROKER]
            nodes.append(Node(node_id, host_name(domain, node_id, brokers), port, controller, plaintext, ssl))
        sides.append(Side(name, realm, domain, *first[name], nodes=tuple(nodes)))
    return sides


def check_hosts(sides: list[Side]) -> None:
    for side in sides:
        for node in side.nodes:
            try:
                addr = socket.gethostbyname(node.host)
            except OSError:
                addr = None
            if addr is None or not addr.startswith("127."):
                raise EnvironmentNotReady(
                    f"the host name {node.host} does not resolve to loopback; run scripts/setup, which adds "
                    "the sandbox's host names to /etc/hosts"
                )
