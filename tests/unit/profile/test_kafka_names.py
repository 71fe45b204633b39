"""The brokers' name rules: Kafka's algorithms on known cases, and the profile's one derived Kafka principal
(validate, render, pre-flight, ACLs). tests/unit/profile/test_kafka_names_oracle.py holds them against Kafka."""

from __future__ import annotations

import re

import pytest

from secure_mirror.cli import main
from secure_mirror.profile import load_profile
from secure_mirror.profile.javaregex import compile_java
from secure_mirror.profile.kafka_names import (
    NameRuleError,
    UnsupportedRule,
    java_replace,
    kerberos_short_name,
    ssl_principal_name,
)
from secure_mirror.profile.loader import ProfileError
from secure_mirror.render import acls
from tests.support import profiles as pf

CORP_RULE = pf.CROSS_REALM_RULE


@pytest.mark.parametrize(
    "principal, rules, realm, expected",
    [
        ("mirror/host.source.test@SOURCE.TEST", ["DEFAULT"], "SOURCE.TEST", "mirror"),
        ("mirror@CORP.TEST", [CORP_RULE, "DEFAULT"], "SOURCE.TEST", "mirror"),
        ("kafka/h@SOURCE.TEST", [CORP_RULE, "DEFAULT"], "SOURCE.TEST", "kafka"),  # the rule needs one component
        ("Mirror@CORP.TEST", ["RULE:[1:$1]/L"], "X", "mirror"),
        ("mirror@CORP.TEST", ["RULE:[1:$1]/U"], "X", "MIRROR"),
        (
            "App.service-name/example.com@REALM.COM",
            ["RULE:[2:$1](App\\..*)s/App\\.(.*)/$1/g", "DEFAULT"],
            "X",
            "service-name",
        ),
        ("aaa@R", ["RULE:[1:$1]s/a/b/"], "X", "baa"),
        ("aaa@R", ["RULE:[1:$1]s/a/b/g"], "X", "bbb"),
        ("m/h@R", ["RULE:[2:$2.$1]"], "X", "h.m"),
        ("plain", ["RULE:[1:x]"], "X", "plain"),  # a name without a realm is used as it is
    ],
)
def test_kerberos_rules_as_kafka_applies_them(principal, rules, realm, expected):
    assert kerberos_short_name(principal, rules, realm) == expected


@pytest.mark.parametrize(
    "principal, rules, stage, error",
    [
        ("mirror@CORP.TEST", ["DEFAULT"], "apply", "NoMatchingRule"),  # DEFAULT maps the default realm only
        ("mirror@CORP.TEST", ["RULE:[1:$1@$0]", "DEFAULT"], "apply", "NoMatchingRule"),  # '@' left: no later rule
        ("mirror@CORP.TEST", ["RULE:[1:$2]"], "apply", "BadFormatString"),
        ("mirror@CORP.TEST", ["RULE:[1:$1]s/m/$1/"], "apply", "IndexOutOfBoundsException"),
        ("mirror@CORP.TEST", ["RULE:[:$1]"], "rules", "NumberFormatException"),
        ("mirror@CORP.TEST", ["DEFAULT/X"], "rules", "IllegalArgumentException"),
        ("a/b/c@R", ["DEFAULT"], "name", "IllegalArgumentException"),
    ],
)
def test_kerberos_failures_as_kafka_fails(principal, rules, stage, error):
    with pytest.raises(NameRuleError) as caught:
        kerberos_short_name(principal, rules, "SOURCE.TEST")
    assert (caught.value.stage, caught.value.java_error) == (stage, error)


KAFKA_DOC_RULES = (
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/"
    "$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT"
)


@pytest.mark.parametrize(
    "subject, expected",
    [
        ("CN=kafka1,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "kafka1"),
        ("CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "adminuser@admin"),
        ("OU=x,CN=Client.One", "client.one"),
        ("O=NoCommonName", "O=NoCommonName"),
    ],
)
def test_ssl_rules_as_kafka_applies_them(subject, expected):
    assert ssl_principal_name(subject, KAFKA_DOC_RULES) == expected


def test_ssl_rules_escape_references_to_missing_groups_by_the_original_positions():
    assert ssl_principal_name("CN=a", "RULE:^CN=(.*)$/$1-$5/") == "a-$5"
    with pytest.raises(NameRuleError) as caught:  # Kafka inserts the second '\\' one place early: \\$\\5$6
        ssl_principal_name("CN=a", "RULE:^CN=(.*)$/$5$6/")
    assert caught.value.java_error == "IndexOutOfBoundsException"


def test_java_find_loop_moves_on_after_an_empty_match():
    assert java_replace(compile_java("x*?"), "xx", "-", True) == "-x-x-"  # Python's re.sub gives --x--x-
    assert re.sub("x*?", "-", "xx") != "-x-x-"


def test_regex_constructs_python_cannot_match_as_java_are_refused():
    with pytest.raises(UnsupportedRule, match=r"rule 1: .*\\b differs between Java versions"):
        kerberos_short_name("a@R", ["RULE:[1:$1](\\ba)"], "R")


# ---- the profile --------------------------------------------------------------------------------------------
def _cross_realm(tmp_path, **mapping) -> dict:
    data = pf.cross_realm(pf.profile_data(tmp_path))
    data["source"]["principal_mapping"].update(mapping)
    return data


def _problems(tmp_path, data) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(pf.write_profile(tmp_path, data))
    return caught.value.problems


def test_one_derived_principal_feeds_the_acls(tmp_path):
    profile = load_profile(pf.write_profile(tmp_path, _cross_realm(tmp_path)))
    assert profile.source.kafka_principal == "User:mirror"
    assert {b.principal for b in acls.source_acls(profile).bindings} == {"User:mirror"}


UNMAPPED = (
    "source.principal_mapping.principal_to_local_rules: no rule maps mirror@CORP.TEST to a Kafka principal, "
    "so the brokers would refuse the mirror's login (DEFAULT maps only the brokers' default realm "
    "SOURCE.TEST); add the brokers' rule for it (e.g. RULE:[1:$1@$0](.*@CORP\\.TEST)s/@.*//) to their "
    "sasl.kerberos.principal.to.local.rules and here, or set principal_mapping.default_realm to the "
    "brokers' default realm"
)


def test_a_principal_no_rule_maps_is_one_sentence_naming_the_side_and_the_fix(tmp_path):
    assert _problems(tmp_path, _cross_realm(tmp_path, principal_to_local_rules=["DEFAULT"])) == [UNMAPPED]


def test_without_a_default_realm_the_mirrors_realm_is_assumed(tmp_path):
    data = _cross_realm(tmp_path, principal_to_local_rules=["DEFAULT"])
    del data["source"]["principal_mapping"]["default_realm"]
    assert load_profile(pf.write_profile(tmp_path, data)).source.kafka_principal == "User:mirror"


@pytest.mark.parametrize(
    "rules, message",
    [
        (["RULE:[1:$1](a,b)"], "source.principal_mapping.principal_to_local_rules.0: holds ','"),
        (
            ["DEFAULT", "RULE:[1:$1"],
            "source.principal_mapping.principal_to_local_rules: rule 2 (RULE:[1:$1) is not a rule Kafka reads",
        ),
        (["RULE:[1:$1](\\bx)"], "source.principal_mapping.principal_to_local_rules.0: rule 1: the regex"),
        (
            ["RULE:[1:$1@$0]"],
            "source.principal_mapping.principal_to_local_rules: the brokers' rules fail on "
            "mirror@CORP.TEST: rule RULE:[1:$1@$0] turns the name into mirror@CORP.TEST, which still",
        ),
    ],
)
def test_bad_rule_sets_are_refused_naming_the_field(tmp_path, rules, message):
    [problem] = _problems(tmp_path, _cross_realm(tmp_path, principal_to_local_rules=rules))
    assert problem.startswith(message)


def test_rules_go_through_the_input_policy(tmp_path):
    [problem] = _problems(tmp_path, _cross_realm(tmp_path, principal_to_local_rules=["RULE:[1:$1]\u202e"]))
    assert problem.startswith("source.principal_mapping.principal_to_local_rules.0: contains an invisible")


def test_mutual_tls_subject_goes_through_the_ssl_rules(tmp_path):
    data = pf.profile_data(tmp_path, target=pf.mutual_tls(tmp_path, "target"))
    data["target"]["principal_mapping"] = {"ssl_principal_mapping_rules": "RULE:^CN=([^,]*),.*$/svc-$1/U"}
    assert load_profile(pf.write_profile(tmp_path, data)).target.kafka_principal == "User:SVC-MIRROR"
    data["target"]["principal_mapping"] = {"ssl_principal_mapping_rules": "RULE:^CN=x,.*$/$1/"}
    [problem] = _problems(tmp_path, data)
    assert problem.startswith(
        "target.principal_mapping.ssl_principal_mapping_rules: no rule maps the certificate "
        "subject CN=mirror,O=Example to a Kafka principal"
    )


@pytest.mark.parametrize("command", [["validate"], ["render", "--out", "OUT"], ["preflight"]])
def test_validate_render_and_preflight_say_the_sentence_without_a_traceback(tmp_path, capsys, command):
    path = pf.write_profile(tmp_path, _cross_realm(tmp_path, principal_to_local_rules=["DEFAULT"]))
    args = [command[0], str(path), *[str(tmp_path / "out") if a == "OUT" else a for a in command[1:]]]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert UNMAPPED in err and "Traceback" not in err


def test_a_rewrite_of_a_name_beyond_the_bmp_is_refused_not_guessed():
    """Found by the oracle (seed 612106160): Java's find loop steps past an empty match by one UTF-16 unit, so
    s/x*?/-/g splits U+1D538 in two, where Python would step over it whole."""
    with pytest.raises(UnsupportedRule, match="beyond U\\+FFFF"):
        kerberos_short_name("mirror@CORP.TEST", ["RULE:[1:\U0001d538$0]s/x*?/-/g"], "CORP.TEST")
    with pytest.raises(UnsupportedRule, match="beyond U\\+FFFF"):
        ssl_principal_name("CN=\U0001d538", "RULE:^CN=(.*)$/$1/")
    assert kerberos_short_name("mirror@CORP.TEST", ["RULE:[1:$1]s/x*?/-/g"], "CORP.TEST") == "-m-i-r-r-o-r-"
