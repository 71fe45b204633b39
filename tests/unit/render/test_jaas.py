"""JAAS quoting: one function, refusals that name the field, and proof with Kafka's and the JDK's own parsers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.profile import load_profile
from secure_mirror.profile.secrets import SecretUnavailable
from secure_mirror.render import UnrepresentableValue, jaas_quote, render_all
from tests.support.profiles import gssapi, password, profile_data, write_profile

REPO = Path(__file__).resolve().parents[3]
HOSTILE = [
    'p"q',
    "a\\b",
    "a\\\\b",
    '\\"',
    "x;y",
    "a=b",
    "with space",
    "debug=true",
    '" debug="true',
    '";',
    'x"; org.Evil required a="b',
    "é漢字🙂",
    "\\n literal",
    "'single'",
    "/* comment */",
    "// slash",
    "$dollar",
    "#hash",
    "!bang",
    ":colon",
    "\\u0041",
    "\\7",
    "{}[]()",
    "=",
    ";",
    '"',
    "\\",
    "*/ KafkaClient { x required; }; /*",
]
# Refused by the input policy (secure_mirror/profile/policy.py) when the secret is resolved, naming the reference.
REFUSED = [
    "tab\there",
    "\x01ct\x0brl",
    "a\x1cb",
    "d\x85e",
    "e\u2028f",
    "f\u2029g",
    "g\x0ch",
    "\x00nul",
    "rlo\u202eexe",
    "new\nline",
    "c\rr",
]


@pytest.mark.parametrize(
    "value, quoted",
    [
        ("plain", '"plain"'),
        ('p"q', '"p\\"q"'),
        ("a\\b", '"a\\\\b"'),
        ("x;y=z w", '"x;y=z w"'),
        ("", '""'),
    ],
)
def test_jaas_quote(value, quoted):
    assert jaas_quote(value, "f") == quoted


@pytest.mark.parametrize(
    "value, what",
    [
        ("a\nb", "a line break"),
        ("a\rb", "a carriage return"),
        ("${user.home}", "'${'"),
    ],
)
def test_unrepresentable_values_are_refused_naming_the_field(value, what):
    with pytest.raises(UnrepresentableValue) as caught:
        jaas_quote(value, "target.sasl.password")
    message = str(caught.value)
    assert message.startswith(f"target.sasl.password: the value contains {what}")
    assert value not in message


def test_refused_password_fails_render_without_writing(tmp_path):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512", value="a${b}c"))
    profile = load_profile(write_profile(tmp_path, data))
    with pytest.raises(UnrepresentableValue, match="target.sasl.password"):
        render_all(profile, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


@pytest.mark.parametrize("value", ["trailing ", " leading"])
def test_blanks_at_the_ends_of_a_password_are_refused_for_librdkafka(tmp_path, value):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "PLAIN", value=value))
    with pytest.raises(
        UnrepresentableValue, match="^target.sasl.password: the value contains blanks at its start or end"
    ):
        render_all(load_profile(write_profile(tmp_path, data)), tmp_path / "out")


# -- the real parsers -------------------------------------------------------------------------------------------


def _java_available() -> bool:
    return shutil.which(paths.java_executable()) is not None and any(paths.kafka_lib_dir().glob("kafka-clients-*.jar"))


def parse_with_java(requests: list[dict]) -> list[dict]:
    """Run jvm/tools/JaasParse.java (Kafka's JaasContext, the JDK's ConfigFile, Kafka's Utils.loadProps)."""
    lines = "".join(json.dumps(request) + "\n" for request in requests)
    result = subprocess.run(
        [paths.java_executable(), "-cp", paths.kafka_classpath(), str(REPO / "jvm" / "tools" / "JaasParse.java")],
        input=lines,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.split("\n") if line.startswith("{")]


def _requests(out: Path, side: str, alias: str) -> list[dict]:
    options = json.loads((out / "spark" / f"{'source' if side == 'source' else 'sink'}-options.json").read_text())
    return [
        {"kind": "inline", "text": options["kafka.sasl.jaas.config"]},
        {"kind": "file", "path": str(out / side / "jaas.conf"), "section": "KafkaClient"},
        {"kind": "properties", "path": str(out / side / "client.properties"), "key": "sasl.jaas.config"},
        {"kind": "properties", "path": str(out / "mm2" / "mm2.properties"), "key": f"{alias}.sasl.jaas.config"},
    ]


@pytest.mark.jvm
def test_hostile_passwords_round_trip_through_every_java_parser(tmp_path):
    if not _java_available():
        pytest.skip("java or the Kafka jars (.deps/kafka/lib) are missing")
    requests, expected = [], []
    for index, value in enumerate(HOSTILE):
        case = tmp_path / f"case{index}"
        data = profile_data(case, target=password(case, "target", "SCRAM-SHA-512", value=value))
        render_all(load_profile(write_profile(case, data)), case / "out")
        for request in _requests(case / "out", "target", "tgt"):
            requests.append(request)
            expected.append(
                {
                    "loginModule": "org.apache.kafka.common.security.scram.ScramLoginModule",
                    "controlFlag": "required",
                    "options": {"username": "mirror", "password": value},
                }
            )
    answers = parse_with_java(requests)
    failures = [
        (req["kind"], exp["options"]["password"], ans)
        for req, exp, ans in zip(requests, expected, answers)
        if ans != {"ok": True, "entries": [exp]}
    ]
    assert len(answers) == len(requests) and failures == []


@pytest.mark.jvm
@pytest.mark.parametrize("value", REFUSED)
def test_secrets_with_control_characters_are_refused_without_showing_them(tmp_path, value):
    data = profile_data(tmp_path, target=password(tmp_path, "target", "SCRAM-SHA-512", value=value))
    with pytest.raises(SecretUnavailable) as caught:
        render_all(load_profile(write_profile(tmp_path, data)), tmp_path / "out")
    message = str(caught.value)
    assert "password.txt: the secret contains " in message and "set a secret without it" in message
    assert value not in message and not (tmp_path / "out").exists()


def test_hostile_keytab_path_and_principal_round_trip(tmp_path):
    if not _java_available():
        pytest.skip("java or the Kafka jars (.deps/kafka/lib) are missing")
    case = tmp_path / "odd 'dir' ;x=y é"
    source = gssapi(case, "source")
    data = profile_data(case, source=source)
    data["source"]["sasl"]["service_name"] = 'kaf"ka'
    out = case / "out"
    render_all(load_profile(write_profile(case, data)), out)
    expected = {
        "loginModule": "com.sun.security.auth.module.Krb5LoginModule",
        "controlFlag": "required",
        "options": {
            "useKeyTab": "true",
            "storeKey": "true",
            "useTicketCache": "false",
            "serviceName": 'kaf"ka',
            "keyTab": source["sasl"]["keytab"],
            "principal": source["sasl"]["principal"],
        },
    }
    for answer in parse_with_java(_requests(out, "source", "src")):
        assert answer == {"ok": True, "entries": [expected]}
