"""failover's cut-over names the target's client files as render writes them, without rendering the tree: a secret
this machine cannot read (the consumer's machine renders them) changes nothing in the list."""

from __future__ import annotations

from secure_mirror.commands.failover import cut_over
from secure_mirror.run.groups import report
from secure_mirror.run.groups.decide import Plan
from secure_mirror.run.groups.session import Observation
from tests.support import profiles as pf


def test_the_cut_over_lists_the_target_client_files_without_reading_a_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", "s3cret")
    profile = pf.load(tmp_path, target=pf.oauth(tmp_path, "target"))
    monkeypatch.delenv("SM_TEST_CLIENT_SECRET")  # the target's secret cannot be read now
    result = report.output(Observation({}, {}, {}, {}), Plan(), ("src", "tgt"), ("m", "c"))  # no group
    text = cut_over(profile, result, None, dry_run=True)
    listed = text.split("(the mirror's identity: replace it with the consumer's):\n")[1].splitlines()
    assert listed == [
        "    OUT/target/jaas.conf: a KafkaClient section for -Djava.security.auth.login.config",
        "    OUT/target/client.properties: Kafka's Java tools: security settings with the identity inline "
        "(sasl.jaas.config)",
        "    OUT/target/librdkafka.conf: kcat -F and confluent-kafka: the same cluster and identity for librdkafka",
        "    OUT/krb5.conf: Kerberos client configuration naming both realms' KDCs",
    ]
