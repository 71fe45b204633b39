"""A secret in a Hadoop credential store, rendered as a reference (render/providers.py): ``${jceks-XXXXXXXX:alias}``,
one provider per store with the store as its ``param.path``, the same name in every file, and the class in Kafka's
allow-list. Kafka's own AdminClientConfig resolving such a reference is shown in profile/test_credstores_jvm.py."""

from __future__ import annotations

from secure_mirror.profile.secrets import SecretRef
from secure_mirror.render import providers
from secure_mirror.render.providers import HADOOP_CREDENTIALS, REFERENCES
from tests.support import profiles as pf

STORE = "jceks://file/etc/secure-mirror/mirror.jceks"
OTHER = "jceks://hdfs@nn.example.com:8020/user/mirror/target.jceks"


def _profile(tmp_path, target_store: str):
    source, target = pf.password(tmp_path, "source", "SCRAM-SHA-512"), pf.password(tmp_path, "target", "PLAIN")
    profile = pf.load(tmp_path, source, target)
    sides = {}
    for side, store in (("source", STORE), ("target", target_store)):
        sasl = profile.cluster(side).sasl
        sasl = sasl.model_copy(update={"password": SecretRef("jceks", store, f"{side}-pw")})
        sides[side] = profile.cluster(side).model_copy(update={"sasl": sasl})
    return profile.model_copy(update=sides)


def test_a_store_is_one_provider_named_the_same_wherever_it_is_used(tmp_path):
    profile = _profile(tmp_path, STORE)
    found = providers.reference(profile.target.sasl.password, "target.sasl.password")
    name = providers.store_provider(STORE).name
    assert str(found) == "${" + name + ":target-pw}" and name.startswith("jceks-") and len(name) == len("jceks-") + 8
    assert providers.declarations(profile.clusters().items()) == {
        "config.providers": name,
        f"config.providers.{name}.class": HADOOP_CREDENTIALS,
        f"config.providers.{name}.param.path": STORE,
    }
    assert providers.declarations([("source", profile.source)]) == providers.declarations([("target", profile.target)])
    assert providers.provider_classes(profile.clusters().items()) == [HADOOP_CREDENTIALS]
    assert providers.needs_hadoop([("target", profile.target)])


def test_two_stores_are_two_providers_in_the_order_of_first_use(tmp_path):
    profile = _profile(tmp_path, OTHER)
    first, second = providers.store_provider(STORE), providers.store_provider(OTHER)
    assert first.name != second.name
    found = providers.declarations(profile.clusters().items())
    assert found["config.providers"] == f"{first.name},{second.name}"
    assert found[f"config.providers.{second.name}.param.path"] == OTHER
    assert providers.provider_classes(profile.clusters().items()) == [HADOOP_CREDENTIALS]  # one class, allowed once


def test_a_file_secret_beside_a_store_declares_both_providers(tmp_path):
    profile = _profile(tmp_path, STORE)
    secret = pf.secret_file(tmp_path / "pw", "Zq9")
    sasl = profile.target.sasl.model_copy(update={"password": SecretRef.parse(secret)})
    profile = profile.model_copy(update={"target": profile.target.model_copy(update={"sasl": sasl})})
    found = providers.declarations(profile.clusters().items())
    assert found["config.providers"] == f"directory,{providers.store_provider(STORE).name}"
    assert providers.environment_names(profile.clusters().items()) == []
    assert REFERENCES.references and not REFERENCES.librdkafka_holds_values
