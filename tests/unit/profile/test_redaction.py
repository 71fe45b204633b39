"""Spark's string redaction (``profile/redaction.py``): the job adds the profile's pattern to its own instead of letting
it replace it, refuses a pattern that cannot stand as one alternative, warns that a pattern can still cut a secret in
two; every redaction setting given as ``-D`` in JVM options meets the same rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from secure_mirror.profile import ProfileError, load_profile, profile_warnings
from secure_mirror.profile.redaction import (
    JOB_PLAN_REDACTION,
    SPARK_REDACTION_DEFAULTS,
    STRING_REDACTION_KEYS,
    plan_redaction,
    redaction_problem,
)
from tests.support import profiles as pf

SECRET_DEFAULT = SPARK_REDACTION_DEFAULTS["spark.redaction.regex"]
REDACTED = "*********(redacted)"  # Spark's replacement text
PLANS = [  # plan strings holding a secret the job's own pattern hides
    'kafka.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required password="p\\"w,d";',
    "kafka.ssl.truststore.password=s3cret, kafka.bootstrap.servers=b:9093",
    "ssl.keystore.key=-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----",
]
SECRETS = ('p\\"w', "s3cret", "MIIB")


def _problems(tmp_path: Path, conf: dict) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path, spark={"conf": conf})))
    return caught.value.problems


# ---- the job's plan redaction: the profile's pattern is added, never a replacement -----------------------------------
def test_without_a_pattern_the_job_sets_its_own():
    assert plan_redaction(None) == plan_redaction("") == JOB_PLAN_REDACTION


def test_a_profile_pattern_is_added_to_the_jobs_own():
    combined = plan_redaction("customer-[0-9]+")
    assert combined == f"{JOB_PLAN_REDACTION}|(?:customer-[0-9]+)"
    for plan in PLANS:  # what the job hid before, it still hides
        assert not any(secret in re.sub(combined, REDACTED, plan) for secret in SECRETS)
    assert re.sub(combined, REDACTED, "topic customer-42") == f"topic {REDACTED}"  # and the profile's too
    assert plan_redaction(combined) == combined  # set once: a session made again keeps it


def test_an_added_pattern_with_alternatives_stays_inside_its_group():
    combined = plan_redaction("a|b")
    assert combined.endswith("|(?:a|b)") and combined.startswith(JOB_PLAN_REDACTION)


# ---- refused: a pattern that cannot stand as one alternative -------------------------------------------------------
@pytest.mark.parametrize("key", STRING_REDACTION_KEYS)
@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("(?x)customer # ids", "turns on the comments flag (?x), where '#' comments out the rest of the pattern"),
        ("a)|(b", "is not self-contained (a group, class or \\Q...\\E left open, or a ')' it did not open)"),
        ("(a", "is not self-contained (a group, class or \\Q...\\E left open, or a ')' it did not open)"),
        ("\\Qa", "is not self-contained (a group, class or \\Q...\\E left open, or a ')' it did not open)"),
        ("[a", "is not self-contained (a group, class or \\Q...\\E left open, or a ')' it did not open)"),
        ("a\\", "is not self-contained (a group, class or \\Q...\\E left open, or a ')' it did not open)"),
    ],
)
def test_a_string_pattern_that_cannot_be_added_is_refused(tmp_path, key, value, why):
    assert _problems(tmp_path, {key: value}) == [
        f"mirror.spark.conf.{key}: {why}, so the job cannot add it to its own plan redaction as one alternative "
        "(<the job's>|(?:<yours>)) and plans would show the secrets the job's pattern hides; write a balanced pattern "
        "without (?x), or remove it"
    ]


@pytest.mark.parametrize("value", ["customer-[0-9]+", "a|(b|c)", "[)]", "\\Q)\\E", "(?i)x", "(?-x)#"])
def test_a_self_contained_string_pattern_is_accepted(value):
    assert redaction_problem("spark.sql.redaction.string.regex", value) is None


# ---- warned: a pattern that can still cut a secret in two ----------------------------------------------------------
@pytest.mark.parametrize("key", STRING_REDACTION_KEYS)
def test_a_string_pattern_is_warned_about(tmp_path, key):
    data = pf.profile_data(tmp_path, spark={"conf": {key: "db\\.password"}})
    (warning,) = profile_warnings(load_profile(pf.write_profile(tmp_path, data)))
    assert str(warning) == (
        f"mirror.spark.conf.{key}: the job adds this pattern to its own plan redaction (password, secret and token "
        "settings, PEM private keys), and Spark replaces matches from left to right: where a match of yours begins "
        "before such a setting and ends inside it (db\\.password before =<the password>), only your match is hidden "
        "and the rest of the secret shows; make each of its alternatives match a whole setting with its value "
        "(db\\.password=[^,\\s]*), or remove it"
    )


def test_what_the_warning_says_happens():
    plan = "db.password=s3cret"
    assert re.sub(plan_redaction("db\\.password"), REDACTED, plan) == f"{REDACTED}=s3cret"
    assert re.sub(plan_redaction("db\\.password=[^,\\s]*"), REDACTED, plan) == REDACTED


# ---- the same settings as -D in JVM options ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key", ["spark.driver.extraJavaOptions", "spark.executor.defaultJavaOptions", "spark.executorEnv.JAVA_TOOL_OPTIONS"]
)
def test_a_redaction_setting_in_jvm_options_meets_the_same_rules(tmp_path, key):
    options = "-Xmx1g '-Dspark.redaction.regex=(?i)secret'"
    assert _problems(tmp_path, {key: options}) == [
        f"mirror.spark.conf.{key}: -Dspark.redaction.regex: replaces Spark's default pattern {SECRET_DEFAULT} and does "
        "not keep it, so settings and environment variables holding passwords, secrets, tokens and access keys that "
        "it no longer finds would show in the Spark UI, event logs and YARN logs; keep the default as an "
        f"alternative: write {SECRET_DEFAULT}|<yours>"
    ]
    assert redaction_problem(key, "-Dspark.sql.redaction.string.regex=(a").startswith(
        "-Dspark.sql.redaction.string.regex: is not self-contained"
    )
    assert redaction_problem(key, f"-Dspark.redaction.regex={SECRET_DEFAULT}|mine -Dx=(") is None
    assert redaction_problem("spark.executorEnv.OTHER", "-Dspark.redaction.regex=x") is None  # not read by a JVM
