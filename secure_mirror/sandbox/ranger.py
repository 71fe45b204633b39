"""The sandbox's Apache Ranger: its Kafka authorizer without a Ranger Admin, for the old broker (sandbox/old_broker.py).

The old broker started with ``ranger`` (``sandbox up --old-broker --old-broker-ranger POLICIES``) authorizes with
Apache Ranger's Kafka authorizer of its era (ranger-kafka-plugin 1.2.0, jvm/ranger-kafka/pom.xml): the plugin finds
no Ranger Admin at its policy URL (a closed loopback port) and loads the policies from its policy cache,
``<cache dir>/kafka_<service>.json`` (its app id is ``kafka``), a ``ServicePolicies`` object written here: the given
policies (render's ``ranger/<side>.policies.json``), the brokers' own (``kafka`` and ``admin``, as super.users are
without Ranger) and the ``kafka`` service definition the plugin's jars ship. Ranger 1.2's authorizer allows every
consumer group without asking its policies, and its service definition has no ``consumergroup`` or ``cluster``
resource: policies on those are refused by its engine (logged), and a cluster operation is asked with no resource,
which any policy granting that access type allows.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror import paths
from secure_mirror.errors import BadInputError, EnvironmentNotReady

RANGER_AUTHORIZER = "org.apache.ranger.authorization.kafka.authorizer.RangerKafkaAuthorizer"
RANGER_VERSION = "1.2.0"
RANGER_ADMIN_URL = "http://127.0.0.1:9"  # nothing listens there: the plugin reads its policy cache
SERVICE_DEF = "service-defs/ranger-servicedef-kafka.json"  # in ranger-plugins-common's jar
BROKER_USERS = ["kafka", "admin"]  # the brokers' own principal and the sandbox's admin, super.users without Ranger


@dataclass
class RangerPolicyCache:
    """What the old broker's Ranger authorizer loads: ``policies`` (Ranger REST API v2 ``RangerPolicy`` objects, as
    render writes them) of the Ranger service ``service``."""

    service: str
    policies: list[dict] = field(default_factory=list)
    version: int = 1

    @classmethod
    def from_file(cls, path: Path) -> RangerPolicyCache:
        """The policies of a rendered ``<side>.policies.json`` (their service is the file's first policy's)."""
        try:
            policies = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise BadInputError(f"cannot read Ranger policies from {path}: {e}") from None
        if not isinstance(policies, list) or not all(isinstance(p, dict) and p.get("resources") for p in policies):
            raise BadInputError(f"{path} is not a JSON list of Ranger policies (render's <side>.policies.json)")
        services = {p.get("service") for p in policies} - {None}
        if len(services) > 1:
            raise BadInputError(f"{path} holds policies of several Ranger services: {sorted(services)}")
        return cls(services.pop() if services else "kafka", policies)

    def service_policies(self) -> dict:
        """Ranger's ``ServicePolicies``, as its PolicyRefresher reads a cache file."""
        jars = sorted(paths.ranger_kafka_lib_dir().glob("ranger-plugins-common-*.jar"))
        if not jars:
            raise EnvironmentNotReady(
                f"Ranger's Kafka plugin is missing from {paths.ranger_kafka_lib_dir()}; run scripts/setup"
            )
        with zipfile.ZipFile(jars[0]) as jar:
            service_def = json.loads(jar.read(SERVICE_DEF))
        every = [a["name"] for a in service_def["accessTypes"]]
        own = [
            {
                "service": self.service,
                "name": f"brokers {resource}",
                "isEnabled": True,
                "isAuditEnabled": False,
                "resources": {resource: {"values": ["*"], "isExcludes": False, "isRecursive": False}},
                "policyItems": [{"accesses": [{"type": a, "isAllowed": True} for a in every], "users": BROKER_USERS}],
            }
            for resource in ("topic", "transactionalid")
        ]
        policies = [{**p, "id": n, "service": self.service} for n, p in enumerate([*own, *self.policies], 1)]
        return {
            "serviceName": self.service,
            "serviceId": 1,
            "policyVersion": self.version,
            "serviceDef": service_def,
            "policies": policies,
        }


def _xml(properties: dict[str, str]) -> str:
    from xml.sax.saxutils import escape

    rows = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n" for k, v in properties.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def write_plugin(folder: Path, cache: RangerPolicyCache) -> None:
    """The plugin's configuration in ``folder`` (on the broker's class path) and its policy cache, written again
    before each start: the plugin reads the cache once, when Ranger Admin does not answer at its start."""
    policies = folder / "policycache"
    policies.mkdir(parents=True, exist_ok=True, mode=0o700)
    prefix = "ranger.plugin.kafka"
    (folder / "ranger-kafka-security.xml").write_text(
        _xml(
            {
                f"{prefix}.service.name": cache.service,
                f"{prefix}.policy.source.impl": "org.apache.ranger.admin.client.RangerAdminRESTClient",
                f"{prefix}.policy.rest.url": RANGER_ADMIN_URL,
                f"{prefix}.policy.cache.dir": str(policies),
                f"{prefix}.policy.pollIntervalMs": "600000",
                f"{prefix}.policy.rest.client.connection.timeoutMs": "1000",
                f"{prefix}.policy.rest.client.read.timeoutMs": "1000",
            }
        )
    )
    (folder / "ranger-kafka-audit.xml").write_text(_xml({"xasecure.audit.is.enabled": "false"}))
    (policies / f"kafka_{cache.service}.json").write_text(json.dumps(cache.service_policies(), indent=1))
