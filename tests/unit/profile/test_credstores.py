"""Hadoop credential stores as secret references (``jceks://file/path.jceks#alias``): the syntax, what validate says,
the sentences of a read that failed, and no value in any message or ``repr``. The store is read by a JVM
(profile/credstore_reader.py), replaced here by its answers; test_credstores_jvm.py reads real stores."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_mirror.profile import ProfileError, SecretRef, credstore_reader, load_profile, profile_warnings, secrets
from secure_mirror.profile.credstore_reader import Answer
from secure_mirror.profile.secrets import SecretUnavailable
from tests.support.profiles import password, profile_data, write_profile

VALUE = "Marker-5ecret:}{#value"
FORMS = "jceks://file/ABSOLUTE/PATH, localjceks://file/ABSOLUTE/PATH or jceks://hdfs@NAMENODE:PORT/PATH"


@pytest.fixture(autouse=True)
def _nothing_read():
    credstore_reader.forget()
    yield
    credstore_reader.forget()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "mirror.jceks"
    path.write_bytes(b"\xce\xce\x00\x02")  # a JCEKS magic; the reader is replaced
    path.chmod(0o600)
    return path


def answering(monkeypatch, answer: Answer) -> list[tuple[str, str, str | None]]:
    """The JVM replaced by ``answer``; the (provider, alias, password) it was asked for."""
    asked: list[tuple[str, str, str | None]] = []

    def ask(provider: str, alias: str, password: str | None) -> Answer:
        asked.append((provider, alias, password))
        return answer

    monkeypatch.setattr(credstore_reader, "_ask", ask)
    return asked


@pytest.mark.parametrize(
    ("text", "provider", "alias"),
    [
        ("jceks://file/etc/secure-mirror/mirror.jceks#source-truststore", "jceks://file/etc/secure-mirror/mirror.jceks",
         "source-truststore"),
        ("localjceks://file/etc/m.jceks#ssl.server.keystore.password", "localjceks://file/etc/m.jceks",
         "ssl.server.keystore.password"),
        ("jceks://hdfs@nn.source.test:8020/user/mirror/m.jceks#Target_PW", "jceks://hdfs@nn.source.test:8020/user/"
         "mirror/m.jceks", "Target_PW"),
        ("jceks://hdfs@mycluster/keys/m.jceks#a", "jceks://hdfs@mycluster/keys/m.jceks", "a"),
        ("jceks://file/etc/with%20space.jceks#a", "jceks://file/etc/with%20space.jceks", "a"),
    ],
)  # fmt: skip
def test_a_provider_uri_and_an_alias(text, provider, alias):
    ref = SecretRef.parse(text)
    assert (ref.kind, ref.name, ref.alias) == ("jceks", provider, alias)
    assert str(ref) == text and repr(ref) == f"SecretRef({text!r})"


def test_a_local_store_is_a_file_on_this_machine():
    assert SecretRef.parse("jceks://file/etc/with%20space.jceks#a").local_file() == Path("/etc/with space.jceks")
    assert SecretRef.parse("localjceks://file/etc/m.jceks#a").local_file() == Path("/etc/m.jceks")
    assert SecretRef.parse("jceks://hdfs@nn:8020/m.jceks#a").local_file() is None


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("jceks://file/etc/m.jceks", "jceks://file/etc/m.jceks: names no alias; write the alias after #, as in "
         "jceks://file/etc/m.jceks#source-truststore"),
        ("jceks://file/etc/m.jceks#", "jceks://file/etc/m.jceks#: names no alias; write the alias after #, as in "
         "jceks://file/etc/m.jceks#source-truststore"),
        ("jceks://file/etc/m.jceks#a:b", "jceks://file/etc/m.jceks#a:b: the alias a:b is not one Hadoop and Kafka's "
         "config references both carry; use letters, digits, '.', '_' and '-' (as `hadoop credential list` shows "
         "them)"),
        ("jceks://file/etc/m.jceks#a}", "jceks://file/etc/m.jceks#a}: the alias a} is not one Hadoop and Kafka's "
         "config references both carry; use letters, digits, '.', '_' and '-' (as `hadoop credential list` shows "
         "them)"),
        ("jceks://file/relative/../x y.jceks#a", f"jceks://file/relative/../x y.jceks#a: not a Hadoop credential "
         f"provider URI; write {FORMS}, then #alias"),
        ("jceks://etc/m.jceks#a", f"jceks://etc/m.jceks#a: etc is not a file system Hadoop keeps credential stores "
         f"on; write {FORMS}, then #alias"),
        ("jceks://file/a.jceks,jceks://file/b.jceks#a", "jceks://file/a.jceks,jceks://file/b.jceks#a: not a Hadoop "
         f"credential provider URI; write {FORMS}, then #alias"),
        ("localjceks://hdfs@nn:8020/m.jceks#a", "localjceks://hdfs@nn:8020/m.jceks#a: localjceks:// names a file on "
         "this machine; write localjceks://file/ABSOLUTE/PATH"),
        ("jceks://file@host/m.jceks#a", "jceks://file@host/m.jceks#a: a file:// store has no host; write "
         "jceks://file/ABSOLUTE/PATH"),
        ("jceks://file/m%zz.jceks#a", "jceks://file/m%zz.jceks#a: the path has a % that is not %XX; write a space "
         "as %20 and % as %25"),
    ],
)  # fmt: skip
def test_a_reference_that_is_not_one_says_how_to_write_it(text, sentence):
    with pytest.raises(ValueError) as caught:
        SecretRef.parse(text)
    assert str(caught.value) == sentence


def problems_of(tmp_path: Path, reference: str) -> list[str]:
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["target"]["sasl"]["password"] = reference
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, data))
    return caught.value.problems


def test_validate_names_the_field_and_the_fix(tmp_path):
    assert problems_of(tmp_path, f"jceks://file{tmp_path}/gone.jceks#target-sasl") == [
        f"target.sasl.password: credential store {tmp_path}/gone.jceks does not exist; create it with `hadoop "
        f"credential create target-sasl -provider jceks://file{tmp_path}/gone.jceks`, or fix the path"
    ]
    (tmp_path / "folder.jceks").mkdir()
    assert problems_of(tmp_path, f"localjceks://file{tmp_path}/folder.jceks#a") == [
        f"target.sasl.password: credential store {tmp_path}/folder.jceks is not a file; name the .jceks file itself"
    ]
    assert problems_of(tmp_path, "jceks://file/etc/m.jceks") == [
        "target.sasl.password: jceks://file/etc/m.jceks: names no alias; write the alias after #, as in "
        "jceks://file/etc/m.jceks#source-truststore"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_validate_says_when_the_store_is_not_readable(tmp_path, store):
    store.chmod(0)
    assert problems_of(tmp_path, f"jceks://file{store}#a") == [
        f"target.sasl.password: credential store {store} is not readable by this user; fix its owner or mode"
    ]


def test_a_store_on_hdfs_is_checked_when_read_not_at_validate(tmp_path):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["target"]["sasl"]["password"] = "jceks://hdfs@nn.target.test:8020/mirror/m.jceks#target-sasl"
    profile = load_profile(write_profile(tmp_path, data))
    assert str(profile.target.sasl.password) == "jceks://hdfs@nn.target.test:8020/mirror/m.jceks#target-sasl"


def test_a_store_others_can_read_is_warned_of(tmp_path, store):
    store.chmod(0o644)
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["target"]["sasl"]["password"] = f"jceks://file{store}#target-sasl"
    warnings = [w for w in profile_warnings(load_profile(write_profile(tmp_path, data))) if "jceks" in w.finding]
    assert [(w.field, w.finding, w.fix) for w in warnings] == [
        (
            "target.sasl.password",
            f"credential store {store} has mode 0644 (group/others can access it): anyone who reads it can act as "
            "the mirror",
            f"chmod 0600 {store}",
        )
    ]


def test_the_value_comes_from_the_store_once_and_the_password_from_hadoops_variable(store, monkeypatch):
    monkeypatch.setenv("HADOOP_CREDSTORE_PASSWORD", "store-password")
    asked = answering(monkeypatch, Answer(value=VALUE))
    ref = SecretRef.parse(f"jceks://file{store}#target-sasl")
    assert ref.resolve() == VALUE and ref.resolve() == VALUE
    assert asked == [(f"jceks://file{store}", "target-sasl", "store-password")]  # one JVM for both
    assert "HADOOP_CREDSTORE_PASSWORD" in secrets.withheld_names()
    with secrets.withheld_from_children():
        assert "HADOOP_CREDSTORE_PASSWORD" not in os.environ
    assert VALUE not in repr(ref) and VALUE not in str(ref) and VALUE not in repr(Answer(value=VALUE))


def test_without_hadoops_variable_the_store_opens_with_its_default_password(store, monkeypatch):
    monkeypatch.delenv("HADOOP_CREDSTORE_PASSWORD", raising=False)
    asked = answering(monkeypatch, Answer(value=VALUE))
    assert SecretRef.parse(f"jceks://file{store}#a").resolve() == VALUE
    assert asked == [(f"jceks://file{store}", "a", None)]


@pytest.mark.parametrize(
    ("answer", "password", "sentence"),
    [
        (Answer(aliases=2), None, "the credential store {p} has no alias target-sasl (it holds 2); add it with "
         "`hadoop credential create target-sasl -provider {p}`, or fix the alias"),
        (Answer(aliases=0), None, "the credential store {p} holds no alias (is the path right?); add it with "
         "`hadoop credential create target-sasl -provider {p}`, or fix the path"),
        (Answer(error="IOException: Keystore was tampered with, or password was incorrect"), None,
         "the credential store {p} did not open with its keystore password (HADOOP_CREDSTORE_PASSWORD is not set; "
         "Hadoop's default is 'none'): IOException: Keystore was tampered with, or password was incorrect; set "
         "HADOOP_CREDSTORE_PASSWORD to the store's password"),
        (Answer(error="IOException: Keystore was tampered with, or password was incorrect"), "wrong",
         "the credential store {p} did not open with its keystore password (HADOOP_CREDSTORE_PASSWORD is set; "
         "Hadoop's default is 'none'): IOException: Keystore was tampered with, or password was incorrect; set "
         "HADOOP_CREDSTORE_PASSWORD to the store's password"),
        (Answer(error="IOException: Invalid keystore format"), None,
         "cannot open the credential store {p}: IOException: Invalid keystore format; fix the reference or the "
         "store"),
    ],
)  # fmt: skip
def test_a_failed_read_names_the_store_and_the_alias(store, monkeypatch, answer, password, sentence):
    if password:
        monkeypatch.setenv("HADOOP_CREDSTORE_PASSWORD", password)
    else:
        monkeypatch.delenv("HADOOP_CREDSTORE_PASSWORD", raising=False)
    answering(monkeypatch, answer)
    provider = f"jceks://file{store}"
    with pytest.raises(SecretUnavailable) as caught:
        SecretRef.parse(f"{provider}#target-sasl").resolve()
    assert str(caught.value) == f"{provider}#target-sasl: " + sentence.format(p=provider)
    assert "wrong" not in str(caught.value)  # the keystore password is a secret too


def test_a_failed_read_is_not_kept(store, monkeypatch):
    answering(monkeypatch, Answer(aliases=1))
    ref = SecretRef.parse(f"jceks://file{store}#a")
    with pytest.raises(SecretUnavailable):
        ref.resolve()
    asked = answering(monkeypatch, Answer(value=VALUE))
    assert ref.resolve() == VALUE and len(asked) == 1


def test_a_value_no_client_configuration_can_carry_is_refused_without_quoting_it(store, monkeypatch):
    answering(monkeypatch, Answer(value="line1\nMarker-5ecret"))
    with pytest.raises(SecretUnavailable) as caught:
        SecretRef.parse(f"jceks://file{store}#a").resolve()
    assert "Marker-5ecret" not in str(caught.value) and "U+000A" in str(caught.value)


@pytest.mark.parametrize(
    ("stdout", "returncode", "stderr", "answer"),
    [
        ("value\tTWFya2VyLTVlY3JldA==\n", 0, "", Answer(value="Marker-5ecret")),
        ("missing\t3\n", 0, "", Answer(aliases=3)),
        ("error\tIOException: Invalid keystore format\n", 0, "", Answer(error="IOException: Invalid keystore format")),
        ("value\t%%%\n", 0, "", Answer(error="the value is not UTF-8 text")),
        ("", 1, "Error: Could not find or load main class CredentialRead\n",
         Answer(error="Hadoop's client failed: Error: Could not find or load main class CredentialRead")),
    ],
)  # fmt: skip
def test_the_readers_answer_is_read_line_by_line(stdout, returncode, stderr, answer):
    assert credstore_reader._parse(stdout, returncode, stderr) == answer
