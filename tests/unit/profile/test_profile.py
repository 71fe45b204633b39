"""The profile: loading, every problem at once, secrets as references, principals, topic selection, renaming."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from secure_mirror.cli import main
from secure_mirror.errors import BadInputError
from secure_mirror.profile import (
    ProfileError,
    SecretRef,
    TopicSelection,
    classify,
    kafka_principal_for_kerberos,
    load_profile,
    profile_warnings,
)
from secure_mirror.profile.javaregex import JavaRegexError, to_python
from secure_mirror.profile.schema import profile_json_schema_text
from tests.support.profiles import PASSWORD, gssapi, password, profile_data, write_profile

REPO = Path(__file__).resolve().parents[3]


def problems_of(tmp_path: Path, data: dict) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, data))
    return caught.value.problems


def test_example_profile_shape_loads(tmp_path):
    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path)))
    assert profile.source.alias == "src"
    assert profile.source.sasl.service_name == "kafka"
    assert profile.mirror.rename.rule == "alias_prefix"
    assert profile.mirror.delivery.acks == "all"


def test_docs_example_is_valid_apart_from_its_placeholder_paths():
    problems = problems_of_file(REPO / "docs" / "profile-example.yaml")
    assert problems and all("/abs/path" in problem for problem in problems)


def problems_of_file(path: Path) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    return caught.value.problems


def test_relative_paths_are_relative_to_the_profile(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["sasl"]["keytab"] = "source/mirror.keytab"
    profile = load_profile(write_profile(tmp_path, data))
    assert profile.source.sasl.keytab == tmp_path / "source" / "mirror.keytab"


def test_every_problem_is_reported_at_once(tmp_path, monkeypatch):
    monkeypatch.delenv("SM_UNSET_VARIABLE", raising=False)
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512"))
    data["source"]["sasl"]["keytab"] = str(tmp_path / "missing.keytab")
    data["source"]["sasl"]["principal"] = "mirror"
    data["source"]["client_options"] = {"sasl.jaas.config": "x", "max.poll.records": 10}
    data["source"]["bootstrap_sevrers"] = ["x:1"]
    data["target"]["sasl"]["password"] = "env:SM_UNSET_VARIABLE"
    data["mirror"]["topics"]["include"] = "orders.(,payments"
    assert problems_of(tmp_path, data) == [
        "source.sasl.principal: principal has no realm; write it in full as name/host@REALM (e.g. mirror/host@EXAMPLE.COM)",
        f"source.sasl.keytab: file {tmp_path}/missing.keytab does not exist; fix the path or create the file",
        "source.client_options.sasl.jaas.config: overrides a security or bootstrap setting the profile owns; set it "
        "through bootstrap_servers, security_protocol, sasl or tls instead",
        "source.bootstrap_sevrers: unknown key; did you mean 'bootstrap_servers'?",
        "target.sasl.password: environment variable SM_UNSET_VARIABLE is not set (or empty); export it before running",
        "mirror.topics.include: pattern 'orders.(': does not compile: missing ), unterminated subpattern at position 7",
    ]


def test_unknown_mechanism(tmp_path):
    data = profile_data(tmp_path)
    data["target"]["sasl"]["mechanism"] = "KERBEROS"
    assert problems_of(tmp_path, data) == [
        "target.sasl: unknown mechanism 'KERBEROS'; use one of GSSAPI, SCRAM-SHA-256, SCRAM-SHA-512, PLAIN, OAUTHBEARER"
    ]


def test_unknown_key_under_a_mechanism_gets_a_hint(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["sasl"]["service"] = "kafka"
    assert problems_of(tmp_path, data) == ["source.sasl.service: unknown key; did you mean 'service_name'?"]


def test_unknown_top_level_key_without_close_match(tmp_path):
    data = profile_data(tmp_path)
    data["zzz"] = 1
    assert problems_of(tmp_path, data) == [
        "zzz: unknown key; remove it (allowed here: version, kerberos, source, target, mirror, hadoop)"
    ]


def test_unreadable_keytab(tmp_path, monkeypatch):
    data = profile_data(tmp_path)
    keytab_path = data["source"]["sasl"]["keytab"]
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != keytab_path and real_access(path, mode))
    assert problems_of(tmp_path, data) == [
        f"source.sasl.keytab: file {keytab_path} is not readable by this user; fix its owner or mode "
        "(chmod 0600, owned by you)"
    ]


def test_not_a_keytab(tmp_path):
    data = profile_data(tmp_path)
    Path(data["source"]["sasl"]["keytab"]).write_bytes(b"hello")
    assert problems_of(tmp_path, data) == [
        f"source.sasl.keytab: {tmp_path}/source/mirror.keytab is not a keytab (no 0x0502 header); "
        "export one with kadmin ktadd or ktutil"
    ]


def test_keytab_readable_by_others_is_a_warning(tmp_path):
    data = profile_data(tmp_path)
    Path(data["source"]["sasl"]["keytab"]).chmod(0o644)
    profile = load_profile(write_profile(tmp_path, data))
    assert [str(warning) for warning in profile_warnings(profile)] == [
        f"source.sasl.keytab: keytab {tmp_path}/source/mirror.keytab has mode 0644 (group/others can access it): "
        f"anyone who reads it can act as the mirror; chmod 0600 {tmp_path}/source/mirror.keytab"
    ]


def test_missing_secret_file(tmp_path):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "PLAIN"))
    data["target"]["sasl"]["password"] = f"file:{tmp_path}/nope.txt"
    assert problems_of(tmp_path, data) == [
        f"target.sasl.password: file {tmp_path}/nope.txt does not exist; create it (mode 0600) or fix the path"
    ]


def test_literal_password_is_refused_without_echoing_it(tmp_path):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "PLAIN"))
    data["target"]["sasl"]["password"] = "hunter2-literal"
    problems = problems_of(tmp_path, data)
    assert problems == [
        "target.sasl.password: not a secret reference; write env:NAME (an environment variable), "
        "file:/absolute/path (a file holding the secret) or jceks://file/absolute/path.jceks#alias (an alias in a "
        "Hadoop credential store) (literal secrets are not allowed in a profile)"
    ]
    assert "hunter2" not in str(problems)


def test_protocol_and_sections_must_agree(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["security_protocol"] = "SSL"
    data["target"]["security_protocol"] = "SASL_PLAINTEXT"
    assert problems_of(tmp_path, data) == [
        "source.sasl: security_protocol SSL does not use SASL; use SASL_SSL or drop sasl",
        "target.tls: security_protocol SASL_PLAINTEXT does not use TLS; use SSL or SASL_SSL, or drop tls",
    ]


def test_realm_must_be_declared_and_aliases_distinct(tmp_path):
    data = profile_data(tmp_path)
    data["target"]["sasl"]["principal"] = "mirror/h@OTHER.TEST"
    data["target"]["alias"] = "src"
    problems = problems_of(tmp_path, data)
    assert problems == ["target.sasl.principal: realm OTHER.TEST is not declared under kerberos.realms; add it there"]


def test_yaml_syntax_error_names_the_position_only(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\nsource: [unclosed, password: hunter2\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert "line" in str(caught.value) and "hunter2" not in str(caught.value)


def test_validate_command_exit_codes(tmp_path, capsys):
    good = write_profile(tmp_path, profile_data(tmp_path))
    assert main(["validate", str(good)]) == 0
    assert capsys.readouterr().out.startswith(
        "profile OK: source src (SASL_SSL/GSSAPI) -> target tgt (SASL_SSL/GSSAPI)"
    )
    data = profile_data(tmp_path)
    data["source"]["sasl"]["principal"] = "mirror"
    assert main(["validate", str(write_profile(tmp_path, data))]) == 2
    err = capsys.readouterr().err
    assert "1 problem:" in err and "source.sasl.principal: principal has no realm" in err and "Traceback" not in err


# -- secrets -----------------------------------------------------------------------------------------------


def test_secret_ref_never_shows_its_value(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_SECRET", PASSWORD)
    ref = SecretRef.parse("env:SM_SECRET")
    assert ref.resolve() == PASSWORD
    assert PASSWORD not in repr(ref) and PASSWORD not in str(ref)
    file_ref = SecretRef.parse(f"file:{tmp_path}/pw")
    (tmp_path / "pw").write_text(PASSWORD + "\n")
    assert file_ref.resolve() == PASSWORD


def test_unresolvable_secret_raises_bad_input(monkeypatch):
    monkeypatch.delenv("SM_NOPE", raising=False)
    with pytest.raises(BadInputError, match="environment variable SM_NOPE is not set"):
        SecretRef.parse("env:SM_NOPE").resolve()


# -- principals ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "principal, expected",
    [
        ("mirror/host.example.com@EXAMPLE.COM", "User:mirror"),
        ("mirror@EXAMPLE.COM", "User:mirror"),
        ("svc-mm2/h@OTHER.REALM", "User:svc-mm2"),
    ],
)
def test_kafka_principal_follows_the_default_rule(principal, expected):
    assert kafka_principal_for_kerberos(principal) == expected


def test_kafka_principal_override(tmp_path):
    data = profile_data(tmp_path)
    data["source"]["sasl"]["kafka_principal"] = "User:mm2"
    assert load_profile(write_profile(tmp_path, data)).source.kafka_principal == "User:mm2"


# -- topic selection -------------------------------------------------------------------------------------------


def test_subscribe_pattern_is_one_java_regex():
    selection = TopicSelection.parse("orders.*, payments", ".*\\.tmp")
    excluded = "__.*|\\..*|.*[\\-\\.]internal|heartbeats|.*\\.heartbeats|connect-configs|connect-offsets|connect-status"
    excluded += "|_schemas|_confluent.*|.*\\.replica"
    assert selection.java_pattern() == f"(?!(?:{excluded}|.*\\.tmp)$)(?:orders.*|payments)"


@pytest.mark.parametrize(
    "topic, mirrored",
    [
        ("orders", True),
        ("orders.eu", True),
        ("payments", True),
        ("payments2", False),
        ("orders.x.tmp", False),
        ("__consumer_offsets", False),
        ("__transaction_state", False),
        ("xorders", False),
    ],
)
def test_matcher_semantics(topic, mirrored):
    assert TopicSelection.parse("orders.*,payments", ".*\\.tmp").matches(topic) is mirrored


def test_internal_topics_excluded_even_when_included_explicitly():
    selection = TopicSelection.parse(".*")
    assert selection.select(["__consumer_offsets", "a", "_single"]) == ["_single", "a"]


@pytest.mark.parametrize(
    "java, python",
    [
        ("\\p{Alpha}+", "[a-zA-Z]+"),
        ("[\\p{Digit}_]+", "[0-9_]+"),
        ("\\P{Lower}", "[^a-z]"),
        ("a\\Q.*\\Eb", "a\\.\\*b"),
        ("(?<name>x)y", "(?P<name>x)y"),
        ("(?<=a)b", "(?<=a)b"),
        ("a*+b++", "a*+b++"),
        ("(?i:orders)", "(?i:orders)"),
        ("x{3}", "x{3}"),
        ("a\\z", "a\\Z"),
    ],
)
def test_java_regex_translation(java, python):
    assert to_python(java) == python


@pytest.mark.parametrize(
    "java, message",
    [
        ("\\p{L}+", "has no exact Python equivalent"),
        ("[a[b]]", "nested character classes"),
        ("[a-z&&b]", "intersection"),
        ("\\R", "Java-only"),
        ("(a)\\1", "back-references"),
        ("(?P<x>a)", "Python-only"),
        ("(?i)orders", "scoped group"),
        ("(?U:a)", "differ between Java and Python"),
        ("a{,3}", "must start a repetition"),
    ],
)
def test_untranslatable_java_regex_is_refused(java, message):
    with pytest.raises(JavaRegexError, match=re.escape(message)):
        to_python(java)


def test_possessive_quantifier_behaves_possessively():
    assert not TopicSelection.parse("a*+a").matches("aaa")
    assert TopicSelection.parse("a*a").matches("aaa")


@pytest.mark.parametrize(
    "piece, kind, value",
    [
        ("payments", "literal", "payments"),
        ("orders\\.eu", "literal", "orders.eu"),
        ("orders.*", "prefix", "orders"),
        ("orders\\..*", "prefix", "orders."),
        (".*", "prefix", ""),
        ("orders.eu", "regex", "orders.eu"),
        ("(a|b)", "regex", "(a|b)"),
    ],
)
def test_classify_for_acls(piece, kind, value):
    resource = classify(piece)
    assert (resource.kind, resource.value) == (kind, value)


# -- renaming --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rename, expected",
    [
        ({"rule": "identity"}, "orders"),
        ({"rule": "alias_prefix"}, "src.orders"),
        ({"rule": "template", "template": "mirror.{source_alias}.{topic}.{target_alias}"}, "mirror.src.orders.tgt"),
    ],
)
def test_target_topic(tmp_path, rename, expected):
    profile = load_profile(write_profile(tmp_path, profile_data(tmp_path, rename=rename)))
    assert profile.target_topic("orders") == expected


@pytest.mark.parametrize(
    "template, message",
    [
        ("mirror.{topic", "template does not parse"),
        ("mirror", "template must contain {topic}"),
        ("{nope}.{topic}", "template does not parse"),
        ("a b.{topic}", "illegal topic names"),
    ],
)
def test_bad_rename_template(tmp_path, template, message):
    data = profile_data(tmp_path, rename={"rule": "template", "template": template})
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith("mirror.rename.template: ") and message in problem


# -- schema ----------------------------------------------------------------------------------------------------


def test_committed_schema_is_generated_from_the_model():
    committed = (REPO / "schema" / "profile.schema.json").read_text()
    assert committed == profile_json_schema_text(), "regenerate: secure-mirror schema > schema/profile.schema.json"


def test_schema_command_prints_it(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["additionalProperties"] is False and set(schema["required"]) == {
        "version",
        "source",
        "target",
        "mirror",
    }


def test_gssapi_cluster_helper_is_consistent(tmp_path):
    assert gssapi(tmp_path, "source")["sasl"]["principal"].endswith("@SOURCE.TEST")


def test_krb5_values_cannot_inject_lines(tmp_path):
    data = profile_data(tmp_path)
    data["kerberos"]["realms"]["SOURCE.TEST"]["kdcs"] = ["127.0.0.1:88\n  kdc = evil:88"]
    [problem] = problems_of(tmp_path, data)
    assert problem.startswith("kerberos.realms.SOURCE.TEST.kdcs.0: contains a line feed (U+000A) at character 13")


def test_a_list_that_contains_itself_is_refused_with_a_sentence(tmp_path):
    """A YAML alias can make a list contain itself; the policy's walk must not recurse for ever (it did)."""
    path = tmp_path / "profile.yaml"
    path.write_text("version: 1\nsource: &x [*x]\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert "source:" in str(caught.value) and "Traceback" not in str(caught.value)


def test_continuous_trigger_is_at_least_once_only(tmp_path):
    data = profile_data(tmp_path, gssapi(tmp_path, "source"), gssapi(tmp_path, "target"))
    data["mirror"]["spark"] = {"trigger": "continuous", "continuous_interval_ms": 500}
    assert load_profile(write_profile(tmp_path, data)).mirror.continuous
    data["mirror"]["delivery"] = {"guarantee": "exactly_once"}
    assert problems_of(tmp_path, data) == [
        "mirror.spark.trigger: continuous processing is at_least_once only (an epoch Spark replays after a stop or "
        "crash is written again, and the sink's transactions are per micro-batch task); set "
        "mirror.delivery.guarantee: at_least_once, or drop mirror.spark.trigger (micro_batch)"
    ]
    data["mirror"]["spark"] = {"trigger": "continuous", "continuous_interval_ms": 0}
    data["mirror"]["delivery"] = {}
    assert [p.split(":")[0] for p in problems_of(tmp_path, data)] == ["mirror.spark.continuous_interval_ms"]
