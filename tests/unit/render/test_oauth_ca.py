"""The token endpoint's CA (sasl.token_endpoint_ca): Kafka's Java client gets it as the JAAS options of its HTTPS call
(KIP-768); librdkafka has no setting for it, so the rendered librdkafka.conf says so and secure_mirror's own librdkafka
clients fetch the token in Python (oauth_cb) trusting it."""

from __future__ import annotations

import functools

from secure_mirror.kafka import oauth
from secure_mirror.render import librdkafka, render_all
from secure_mirror.render.jaas import inline_jaas
from tests.support import profiles as pf


def _profile(tmp_path, monkeypatch, ca: bool):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", "s3cret")
    source = pf.oauth(tmp_path, "source")
    if ca:
        source["sasl"]["token_endpoint_ca"] = pf.ca(tmp_path)
    return pf.load(tmp_path, source=source)


def test_the_java_client_trusts_the_token_endpoint_ca_through_its_jaas_options(tmp_path, monkeypatch):
    profile = _profile(tmp_path, monkeypatch, ca=True)
    assert inline_jaas(profile.source, "source").endswith(
        f'scope="kafka" ssl.truststore.type="PEM" ssl.truststore.location="{tmp_path / "ca.pem"}";'
    )
    without = _profile(tmp_path / "none", monkeypatch, ca=False)
    assert "ssl.truststore" not in inline_jaas(without.source, "source")


def test_librdkafka_clients_fetch_the_token_in_python_only_when_a_ca_is_named(tmp_path, monkeypatch):
    conf = librdkafka.identity(_profile(tmp_path, monkeypatch, ca=True).source, "source").conf
    assert not any(key.startswith("sasl.oauthbearer.") for key in conf)
    callback = conf["oauth_cb"]
    assert isinstance(callback, functools.partial) and callback.func is oauth.fetch_token
    assert callback.args[-2:] == (str(tmp_path / "ca.pem"), 30.0)
    native = librdkafka.identity(_profile(tmp_path / "none", monkeypatch, ca=False).source, "source").conf
    assert native["sasl.oauthbearer.method"] == "oidc" and "oauth_cb" not in native


def test_the_rendered_librdkafka_conf_says_it_cannot_use_the_ca(tmp_path, monkeypatch):
    render_all(_profile(tmp_path, monkeypatch, ca=True), tmp_path / "out")
    text = (tmp_path / "out" / "source" / "librdkafka.conf").read_text()
    assert "checks the token endpoint's certificate\n# against the system's CA store only" in text
