"""Hostile and broken profiles (issue 7, part 5): every one gets a clear error with exit 2, or works.

For each generated input, ``secure-mirror validate FILE`` and ``secure-mirror render FILE --out DIR`` must
return 0 or 2 (never 3, the exit code of an unexpected error), print no traceback, finish within
:data:`TIME_LIMIT` seconds, leave nothing behind when ``render`` fails, and never show a secret value: not on
stdout or stderr, and not in a rendered file whose mode is not 0600. JAAS values built from hostile strings are
read back with Kafka's and the JDK's own parsers (``jvm/tools/JaasParse.java``, one JVM for the whole module):
the login module and its options must be exactly the ones the profile asked for.

The commands run in-process (``cli.main``) for speed; :func:`test_the_real_entry_point` runs a few through
``python -m secure_mirror``. Settings (quick by default, ``SECURE_MIRROR_RELIABILITY=long`` for thousands of
examples) and the printed summary live in ``conftest.py``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from secure_mirror import cli, paths
from secure_mirror.profile import load_profile, policy
from secure_mirror.profile.secrets import SecretUnavailable
from secure_mirror.render import UnrepresentableValue, jaas, mm2
from tests.support import profiles as factory

from .conftest import PROFILE, STATS

pytestmark = pytest.mark.reliability

REPO = Path(__file__).resolve().parents[2]
SETTINGS = settings.get_profile(PROFILE)
TIME_LIMIT = 20.0  # seconds one validate or render may take, whatever the input
MARKER = f"SmSecret{uuid.uuid4().hex}"  # part of every secret value; must never show where it should not
SECRET_ENV = "SM_RELIABILITY_SECRET"


# -- running the commands and judging what they did --------------------------------------------------------------


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that cli.main cannot turn it into exit 3."""


@contextlib.contextmanager
def time_limit(seconds: float):
    def _alarm(signum, frame):
        raise Hang(f"took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``cli.main(argv)`` with stdout and stderr captured; an escaping exception or a hang fails the test."""
    out, err = io.StringIO(), io.StringIO()
    STATS["cli_runs"] += 1
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with time_limit(TIME_LIMIT):
                code = cli.main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code
        except Hang:
            STATS["hangs"] += 1
            raise AssertionError(f"{argv[0]} took more than {TIME_LIMIT} s") from None
        except BaseException:
            STATS["tracebacks"] += 1
            raise
    return code, out.getvalue(), err.getvalue()


def judge(command: str, code: int, out: str, err: str, secrets: tuple[str, ...] = ()) -> None:
    """Exit 0 or 2, a one-line reason on stderr when 2, no traceback, no secret in the output."""
    STATS[f"exit{code}"] += 1
    text = out + err
    if "Traceback (most recent call last)" in text:
        STATS["tracebacks"] += 1
    leaked = [secret for secret in secrets if secret and secret in text]
    if leaked:
        STATS["leaks"] += 1
    assert not leaked, f"{command}: a secret value is in its output"
    assert "Traceback (most recent call last)" not in text, text
    assert code in (0, 2), f"{command} exited {code}:\n{err}"
    if code == 2:
        reasons = [line for line in err.split("\n") if not line.startswith("warning: ")]  # warnings come first
        assert reasons and reasons[0].startswith((f"secure-mirror {command}: ", "usage:")), err
        # every line is ours: a file name holding a line break must not forge one
        assert all(
            line.startswith(("warning: ", f"secure-mirror {command}: ", "  - ", "usage: ")) or not line
            for line in err.split("\n")
        ), err
    else:
        assert out.strip(), f"{command} succeeded silently"


def check_render(profile: Path, secrets: tuple[str, ...] = (), *options: str) -> tuple[int, Path]:
    """Run render into a fresh folder; check the all-or-nothing rule and the mode of files holding a secret."""
    out_dir = profile.parent / "out"
    code, out, err = run_cli(["render", str(profile), "--out", str(out_dir), *options])
    judge("render", code, out, err, secrets)
    leftovers = [p.name for p in out_dir.parent.iterdir() if p.name.startswith(".out.")]
    if code != 0 and (out_dir.exists() or leftovers):
        STATS["left_behind"] += 1
        raise AssertionError(f"render failed but left {out_dir if out_dir.exists() else leftovers} behind")
    assert not leftovers, leftovers
    if code == 0:
        for path in out_dir.rglob("*"):
            if path.is_file() and secrets and stat.S_IMODE(path.stat().st_mode) != 0o600:
                content = path.read_bytes().decode("utf-8", "replace")
                if any(secret in content for secret in secrets):
                    STATS["leaks"] += 1
                    raise AssertionError(
                        f"{path.relative_to(out_dir)} holds a secret but has mode "
                        f"{stat.S_IMODE(path.stat().st_mode):04o}"
                    )
    return code, out_dir


def check_both(profile: Path, secrets: tuple[str, ...] = (), *options: str) -> tuple[int, int, Path]:
    """validate and render (with render's ``options``) the profile at ``profile``."""
    STATS["inputs"] += 1
    code, out, err = run_cli(["validate", str(profile)])
    judge("validate", code, out, err, secrets)
    render_code, out_dir = check_render(profile, secrets, *options)
    if code == 2:  # validate refused it: render must refuse it too (render may refuse more: unrepresentable values)
        assert render_code == 2
    return code, render_code, out_dir


@contextlib.contextmanager
def scratch():
    with tempfile.TemporaryDirectory(prefix="sm-hostile-") as folder:
        yield Path(folder)


@pytest.fixture(scope="module", autouse=True)
def _crash_logs_in_scratch():
    """cli writes an unexpected error's traceback to a temp file: keep those out of /tmp (and count them)."""
    folder = Path(tempfile.mkdtemp(prefix="sm-hostile-logs-"))
    saved, tempfile.tempdir = tempfile.tempdir, str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = saved
        crashes = list(folder.glob("secure-mirror-error-*"))
        shutil.rmtree(folder, ignore_errors=True)
        assert crashes == [], "cli wrote crash logs (exit 3)"


def write_bytes(folder: Path, data: bytes) -> Path:
    path = folder / "profile.yaml"
    path.write_bytes(data)
    return path


# -- strategies -------------------------------------------------------------------------------------------------

JAAS_FRAGMENTS = [
    '"',
    "\\",
    ";",
    "\n",
    "\r",
    "=",
    " ",
    "\t",
    "${",
    "}",
    "${user.home}",
    "debug=true",
    ' debug="true"',
    '"; debug="true',
    '";\norg.evil.Module required x="y',
    '" useTicketCache="true',
    '\\"',
    "\\u0041",
    "\\n",
    "/*",
    "*/",
    "//",
    "#",
    "!",
    ":",
    "{",
    "'",
    "\x00",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\u2028",
    "é",
    "漢字",
    "🙂",
    "required",
    "optional",
    "$",
    "\\\\",
    "%{sasl.kerberos.keytab}",
    "`id`",
    "$(id)",
]
hostile_text = st.lists(st.one_of(st.sampled_from(JAAS_FRAGMENTS), st.text(max_size=4)), max_size=8).map("".join)
secret_value = st.tuples(hostile_text, hostile_text).map(lambda parts: parts[0] + MARKER + parts[1])

REGEX_ATOMS = [
    "a",
    "b",
    ".",
    "\\.",
    "(a+)+$",
    "(a|a)*",
    "(a*)*b",
    "(?:a|aa)+",
    "[a-z]",
    "[^a]",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    "{3}",
    "{2,5}",
    "\\p{L}",
    "\\p{Alpha}",
    "\\P{Digit}",
    "[\\p{Lower}]",
    "[a&&b]",
    "[a[b]]",
    "\\R",
    "\\h",
    "\\Q",
    "\\E",
    "\\x{41}",
    "\\x41",
    "\\u0041",
    "(?<n>a)",
    "(?P<n>a)",
    "\\1",
    "\\k<n>",
    "(?i)",
    "(?i:a)",
    "(?x:a)",
    "(?u:a)",
    "*",
    "+",
    "?",
    "*+",
    "++",
    "?+",
    "*?",
    "(?>a)",
    "(?=a)",
    "(?<=a)",
    "(?<!a)",
    "^",
    "$",
    "\\",
    "\\z",
    "\\Z",
    "\\G",
    "|",
    ",",
    "\\0",
    "\\c",
    "\\e",
    "#",
    " ",
    "é",
    "\\d",
    "\\w",
    "\\s",
    "\\b",
    "orders",
    "-",
    "_",
]
regexes = st.one_of(
    st.lists(st.sampled_from(REGEX_ATOMS), min_size=1, max_size=14).map("".join),
    st.integers(1, 3000).map(lambda n: "(" * n + "a" + ")" * n),
    st.integers(1, 3000).map(lambda n: "(?:a" * n + ")+" * n),
    st.integers(1, 20000).map(lambda n: "|".join(f"t{i}" for i in range(n))),
    st.integers(1, 2000).map(lambda n: ",".join(f"t{i}.*" for i in range(n))),
    st.integers(0, 10**15).map(lambda n: f"a{{{n}}}"),
    st.integers(1, 200000).map(lambda n: "a" * n),
    st.text(max_size=30),
)

wrong_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=10**300),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    hostile_text,
    st.integers(1000, 300000).map(lambda n: "x" * n),
    st.lists(st.integers() | st.text(max_size=5), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
    st.sampled_from(
        [
            "env:",
            "file:",
            "env:NOPE_NOT_SET",
            "file:~nobody-at-all/x",
            "file:/" + "a" * 5000,
            "file:/dev/null",
            "file:/proc/self/environ",
            "/etc/passwd",
            "~nobody-at-all/keytab",
            "/" + "b" * 5000,
            "/tmp",
            "",
            ".",
            "..",
            "\x00",
            "GSSAPI",
            "SASL_SSL",
            "local[*]",
            "-1",
            "{topic}",
            "{topic:>999999999}",
            "{topic.__class__}",
            "{0}",
            "(a+)+$",
            "[",
            "${x}",
        ]
    ),
    regexes,
)


def _paths(node, prefix=()):
    """Every (path) to a value inside the nested dicts and lists of a profile."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


def _parent(data, path):
    for key in path[:-1]:
        data = data[key]
    return data


def base_profile(folder: Path, sides: tuple[str, str]) -> dict:
    """A valid profile from the unit tests' factory (every file it names exists under ``folder``)."""
    os.environ[SECRET_ENV] = "x" + MARKER  # for the oauth side
    makers = {
        "gssapi": factory.gssapi,
        "scram": lambda f, s: factory.password(f, s, "SCRAM-SHA-512", value=MARKER, newline=False),  # a reference's
        "plain": lambda f, s: factory.password(f, s, "PLAIN", value=MARKER, newline=False),
        "mtls": factory.mutual_tls,
        "oauth": factory.oauth,
        "plaintext": factory.plaintext,
    }
    data = factory.profile_data(folder, makers[sides[0]](folder, "source"), makers[sides[1]](folder, "target"))
    for side in ("source", "target"):
        sasl = data[side].get("sasl") or {}
        if sasl.get("client_secret") == "env:SM_TEST_CLIENT_SECRET":
            sasl["client_secret"] = f"env:{SECRET_ENV}"
    return data


KINDS = ("gssapi", "scram", "plain", "mtls", "oauth", "plaintext")


# -- 1. broken files: junk, non-mappings, YAML bombs, deep nesting, duplicate keys ------------------------------------


def _laughs(levels: int, width: int) -> str:
    lines = ["l0: &l0 " + "lol" * 3]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\nversion: 1\nsource: *l{levels}\nmirror: {{topics: {{include: *l{levels}}}}}\n"


def _merges(levels: int) -> str:
    lines = ["m0: &m0 {a: 1, b: 2}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\nsource: *m{levels}\n"


def _deep(depth: int, style: str) -> str:
    if style == "flow-seq":
        return "source: " + "[" * depth + "]" * depth + "\n"
    if style == "flow-map":
        return "source: " + "{a: " * depth + "1" + "}" * depth + "\n"
    if style == "block-seq":
        return "source:\n" + "".join("  " * i + "-\n" for i in range(depth)) + "  " * depth + "- x\n"
    return "source:\n" + "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "x: 1\n"


YAML_TOKENS = [
    "{",
    "}",
    "[",
    "]",
    ":",
    ": ",
    "- ",
    ",",
    "&a ",
    "*a",
    "*b",
    "&b ",
    "<<: ",
    "!!str ",
    "!!int ",
    "!!binary ",
    "!!python/object:os.system ",
    "!!timestamp ",
    "!!float ",
    "!!bool ",
    "!!set ",
    "!!omap ",
    "!!pairs ",
    "!!map ",
    "!!seq ",
    "!!null ",
    "!!merge ",
    "!!value ",
    "!<tag:yaml.org,2002:int> ",
    "!local ",
    "? ",
    "|",
    ">",
    "'",
    '"',
    "#",
    "%YAML 1.1\n",
    "---\n",
    "...\n",
    "\n",
    "  ",
    "\t",
    "version",
    "source",
    "1",
    "99999999999999999999",
    "2001-02-30",
    ".nan",
    "~",
    "null",
    "\\ud800",
    '"\\ud800"',
    '"\\x00"',
    "é",
    "\ufeff",
    "\x85",
    "\u2028",
]

broken_files = st.one_of(
    st.binary(max_size=400),
    st.lists(st.sampled_from(YAML_TOKENS), max_size=60).map(lambda t: "".join(t).encode("utf-8")),
    st.text(max_size=300).map(lambda t: t.encode("utf-8")),
    st.one_of(
        st.none(), st.integers(), st.floats(), st.text(max_size=20), st.lists(st.integers(), max_size=3), st.booleans()
    ).map(lambda v: yaml.safe_dump(v).encode()),
    st.tuples(st.integers(1, 12), st.integers(1, 12)).map(lambda p: _laughs(*p).encode()),
    st.integers(1, 40).map(lambda n: _merges(n).encode()),
    st.tuples(st.integers(1, 3000), st.sampled_from(["flow-seq", "flow-map", "block-seq", "block-map"])).map(
        lambda p: _deep(*p).encode()
    ),
    st.sampled_from(
        [
            b"a: &a [*a]\n",
            b"version: &v {x: *v}\nsource: &s {alias: *s, sasl: *s}\n",
            b"version: 1\nversion: 1\n",
            b"version: 9" + b"9" * 5000 + b"\n",
            b"version: 2001-13-45\n",
            "version: 1\n".encode("utf-16"),
            b"\xef\xbb\xbfversion: 1\n",
            b"",
            b"\x00",
            b"---\n---\n",
            b'version: "\\ud800"\n',
            b"? [a]\n: 1\n",
            b"!!binary x: 1\n",
            b'"' * 1000,
        ]
    ),
)


@SETTINGS
@given(content=broken_files)
def test_broken_files_are_refused_clearly(content):
    with scratch() as folder:
        check_both(write_bytes(folder, content))


@SETTINGS
@given(kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)), data=st.data())
def test_duplicate_keys_are_refused(kinds, data):
    with scratch() as folder:
        lines = yaml.safe_dump(base_profile(folder, kinds), sort_keys=False).splitlines(keepends=True)
        keyed = [i for i, line in enumerate(lines) if re.match(r"^\s*[A-Za-z_]+:", line)]
        index = data.draw(st.sampled_from(keyed))
        lines.insert(index + 1, lines[index])  # "key: value" or "key:" (then the first one is null): twice
        path = write_bytes(folder, "".join(lines).encode())
        code, render_code, _ = check_both(path, (MARKER,))
        assert code == 2 and render_code == 2


# -- 2. valid profiles, then broken: wrong types, missing fields, huge values, extra keys -----------------------------


@SETTINGS
@given(kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)), data=st.data())
def test_mutated_profiles_fail_clearly_or_work(kinds, data):
    with scratch() as folder:
        profile = base_profile(folder, kinds)
        for _ in range(data.draw(st.integers(1, 4), label="mutations")):
            path = data.draw(st.sampled_from(list(_paths(profile))), label="at")
            parent, key = _parent(profile, path), path[-1]
            action = data.draw(st.sampled_from(["replace", "replace", "delete", "add", "rename"]), label="action")
            if action == "replace":
                parent[key] = data.draw(wrong_values, label="value")
            elif action == "delete":
                del parent[key]
            elif action == "add" and isinstance(parent, dict):
                parent[data.draw(st.text(max_size=20) | st.sampled_from(["sasl.jaas.config", "password"]))] = data.draw(
                    wrong_values, label="value"
                )
            elif action == "rename" and isinstance(parent, dict):
                parent[str(key).upper() + "_"] = parent.pop(key)
        text = yaml.safe_dump(profile, sort_keys=False, allow_unicode=True)
        check_both(write_bytes(folder, text.encode("utf-8")), (MARKER,))


FILE_FIELDS = {  # kinds of the two sides -> fields that name a file or a secret
    "gssapi": [("sasl", "keytab"), ("tls", "ca")],
    "mtls": [("tls", "certificate"), ("tls", "key"), ("tls", "key_password"), ("tls", "ca")],
    "scram": [("sasl", "password"), ("tls", "ca"), ("tls", "truststore_password")],
    "oauth": [("sasl", "client_secret")],
}
hostile_paths = st.one_of(
    st.sampled_from(
        [
            "~nobody-at-all/x",
            "~",
            "/" + "p" * 5000,
            "/tmp/a\x00b",
            "/dev/null",
            "/proc/self/mem",
            "/",
            ".",
            "",
            "../../../../etc/shadow",
            "/nonexistent/x",
            "x" * 300,
            "\u2028",
            "C:\\x",
            "file:",
        ]
    ),
    st.text(max_size=30),
)


@SETTINGS
@given(source=st.sampled_from(["gssapi", "mtls"]), target=st.sampled_from(["scram", "oauth"]), data=st.data())
def test_hostile_files_and_references(source, target, data):
    """Keytabs, certificates, keys and secret references that point at junk, at nothing, or at no valid name."""
    with scratch() as folder:
        profile = base_profile(folder, (source, target))
        side = data.draw(st.sampled_from(["source", "target"]), label="side")
        section, field = data.draw(st.sampled_from(FILE_FIELDS[source if side == "source" else target]), label="field")
        secret = field.endswith(("password", "secret"))
        if data.draw(st.booleans(), label="junk content"):
            junk = folder / "junk" / _file_name(data.draw(hostile_text, label="name"))
            junk.parent.mkdir(exist_ok=True)
            junk.write_bytes(
                data.draw(
                    st.binary(max_size=300)
                    | st.sampled_from(
                        [
                            b"-----BEGIN CERTIFICATE-----\n\xff\xfe\n-----END CERTIFICATE-----\n",
                            b"-----BEGIN PRIVATE KEY-----\nnot base64 \xe9\n-----END PRIVATE KEY-----\n",
                            b"\x05\x02" + bytes(range(256)),
                            MARKER.encode() + b"\xff\n",
                        ]
                    ),
                    label="content",
                )
            )
            value = f"file:{junk}" if secret else str(junk)
        else:
            value = data.draw(hostile_paths, label="path")
            value = data.draw(st.sampled_from(["file:", "env:", ""]), label="prefix") + value if secret else value
        profile[side].setdefault(section, {})[field] = value
        text = yaml.safe_dump(profile, allow_unicode=True)
        check_both(write_bytes(folder, text.encode("utf-8")), (MARKER,))


@SETTINGS
@given(
    include=regexes,
    exclude=st.none() | regexes,
    template=st.none() | hostile_text | st.sampled_from(["{topic:>99999999}", "{topic!r}", "{x}.{topic}"]),
)
def test_hostile_topic_patterns_and_templates(include, exclude, template):
    with scratch() as folder:
        profile = base_profile(folder, ("gssapi", "gssapi"))
        profile["mirror"]["topics"] = {"include": include, **({"exclude": exclude} if exclude is not None else {})}
        if template is not None:
            profile["mirror"]["rename"] = {"rule": "template", "template": template}
        check_both(write_bytes(folder, yaml.safe_dump(profile).encode()))


def test_every_base_profile_renders():
    """The mutations start from profiles that work (otherwise the properties above would test little)."""
    for kinds in zip(KINDS, KINDS[1:] + KINDS[:1]):
        with scratch() as folder:
            code, render_code, _ = check_both(
                write_bytes(folder, yaml.safe_dump(base_profile(folder, kinds)).encode()), (MARKER,)
            )
            assert (code, render_code) == (0, 0), kinds


# -- 3. JAAS injection: hostile credentials, read back by Kafka's and the JDK's parsers --------------------------------


class JaasParser:
    """One JVM running jvm/tools/JaasParse.java for the whole module; one JSON request per line."""

    def __init__(self):
        self.process = subprocess.Popen(
            [
                paths.java_executable(),
                "-Dfile.encoding=UTF-8",
                "-Dsun.stdout.encoding=UTF-8",
                "-cp",
                paths.kafka_classpath(),
                str(REPO / "jvm" / "tools" / "JaasParse.java"),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )

    def parse(self, requests: list[dict]) -> list[dict]:
        for request in requests:
            self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        with time_limit(120):
            answers = [json.loads(self.process.stdout.readline()) for _ in requests]
        STATS["jaas_parsed"] += len(answers)
        return answers

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def jaas_parser():
    if shutil.which(paths.java_executable()) is None or not any(paths.kafka_lib_dir().glob("kafka-clients-*.jar")):
        pytest.skip("java or the Kafka jars (.deps/kafka/lib) are missing")
    parser = JaasParser()
    yield parser
    parser.close()


def _component(text: str) -> str:
    """A hostile string usable as one Kerberos principal component (no '/', '@' or blanks)."""
    return re.sub(r"[/@\s]", "", text) or "x"


def _file_name(text: str) -> str:
    name = text.replace("/", "").replace("\x00", "")
    name = name if name not in ("", ".", "..") else "k"
    while len(name.encode("utf-8")) > 200:
        name = name[:-1]
    return name


PROTECTED_KEYS = st.tuples(
    st.sampled_from(
        [
            "",
            "producer.",
            "consumer.",
            "admin.",
            "src.",
            "tgt.",
            "tgt.producer.",
            "producer.override.",
            "kafka.",
            "main.consumer.",
        ]
    ),
    st.sampled_from(
        [
            "sasl.jaas.config",
            "sasl.mechanism",
            "ssl.keystore.password",
            "security.protocol",
            "bootstrap.servers",
            "sasl.login.callback.handler.class",
            "linger.ms",
        ]
    ),
).map("".join)


def _jaas_expected(cluster: dict, resolved: dict) -> dict:
    sasl = cluster["sasl"]
    mechanism = sasl["mechanism"]
    if mechanism == "GSSAPI":
        return {
            "loginModule": "com.sun.security.auth.module.Krb5LoginModule",
            "controlFlag": "required",
            "options": {
                "useKeyTab": "true",
                "storeKey": "true",
                "useTicketCache": "false",
                "serviceName": sasl.get("service_name", "kafka"),
                "keyTab": sasl["keytab"],
                "principal": sasl["principal"],
            },
        }
    if mechanism == "OAUTHBEARER":
        options = {"clientId": sasl["client_id"], "clientSecret": resolved["secret"]}
        if sasl.get("scope") is not None:
            options["scope"] = sasl["scope"]
        return {
            "loginModule": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
            "controlFlag": "required",
            "options": options,
        }
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return {
        "loginModule": f"org.apache.kafka.common.security.{module}",
        "controlFlag": "required",
        "options": {"username": sasl["username"], "password": resolved["secret"]},
    }


@st.composite
def hostile_clusters(draw, folder: Path) -> tuple[dict, dict]:
    """A source cluster whose every credential field is hostile; returns (cluster, {"secret": resolved value})."""
    mechanism = draw(st.sampled_from(["GSSAPI", "SCRAM-SHA-512", "PLAIN", "OAUTHBEARER"]))
    cluster = factory.gssapi(folder, "source")
    resolved = {}
    if mechanism == "GSSAPI":
        name = _file_name(draw(hostile_text))
        cluster["sasl"]["keytab"] = factory.keytab(folder / "keytabs" / name)
        principal = _component(draw(hostile_text))
        if draw(st.booleans()):
            principal += "/" + _component(draw(hostile_text))
        cluster["sasl"]["principal"] = principal + "@SOURCE.TEST"
        cluster["sasl"]["service_name"] = draw(hostile_text.filter(bool))
    else:
        value = draw(secret_value)
        if draw(st.booleans()) and "\x00" not in value:
            os.environ[SECRET_ENV] = value
            reference = f"env:{SECRET_ENV}"
            resolved["secret"] = value
        else:
            reference = factory.secret_file(folder / "secret" / "value.txt", value)
            resolved["secret"] = (value + "\n").removesuffix("\n").removesuffix("\r")
        if mechanism == "OAUTHBEARER":
            cluster["sasl"] = {
                "mechanism": mechanism,
                "client_id": draw(hostile_text.filter(bool)),
                "client_secret": reference,
                "token_endpoint_url": "https://idp.example.com/token",
                "scope": draw(st.none() | hostile_text),
            }
        else:
            cluster["sasl"] = {
                "mechanism": mechanism,
                "username": draw(hostile_text.filter(bool)),
                "password": reference,
            }
    if draw(st.integers(0, 3)) == 0:  # sometimes: most of them are refused, and then there is no JAAS to parse
        cluster["client_options"] = {draw(PROTECTED_KEYS): draw(hostile_text)}
    return cluster, resolved


@SETTINGS
@given(data=st.data())
def test_jaas_injection_never_changes_a_login_option(jaas_parser, data):
    with scratch() as folder:
        cluster, resolved = data.draw(hostile_clusters(folder), label="source")
        profile = factory.profile_data(folder, source=cluster)
        if data.draw(st.integers(0, 3), label="mm2 key") == 0:
            profile["mirror"]["mm2"] = {"properties": {data.draw(PROTECTED_KEYS, label="key"): "x"}}
        # allow_unicode=False: PyYAML would write U+0085 raw into a quoted scalar, where YAML reads it as a space
        path = write_bytes(folder, yaml.safe_dump(profile, allow_unicode=False).encode("utf-8"))
        secrets = (MARKER, resolved["secret"]) if resolved.get("secret") else ()
        code, render_code, out_dir = check_both(path, secrets, "--secrets", "values")  # the values' quoting
        if code != 0:
            return
        loaded = load_profile(path)
        expected = {"ok": True, "entries": [_jaas_expected(cluster, resolved)]}
        try:
            inline = jaas.inline_jaas(loaded.source, "source")
            (folder / "jaas.conf").write_text(jaas.jaas_file(loaded.source, "source", "x"), encoding="utf-8")
        except UnrepresentableValue as refused:
            STATS["jaas_refused"] += 1
            assert render_code == 2 and "the value contains" in str(refused)
            values = [v for v in _jaas_expected(cluster, resolved)["options"].values()]
            assert any("\n" in v or "\r" in v or "${" in v for v in values)
            return
        except SecretUnavailable as refused:  # the input policy: no control character in a resolved secret
            STATS["jaas_refused"] += 1
            assert render_code == 2 and "the secret contains" in str(refused)
            assert policy.FORBIDDEN.search(resolved["secret"])
            return
        requests = [
            {"kind": "inline", "text": inline},
            {"kind": "file", "path": str(folder / "jaas.conf"), "section": "KafkaClient"},
        ]
        if render_code == 0:
            requests += [
                {"kind": "file", "path": str(out_dir / "source" / "jaas.conf"), "section": "KafkaClient"},
                {
                    "kind": "properties",
                    "path": str(out_dir / "source" / "client.properties"),
                    "key": "sasl.jaas.config",
                },
                {"kind": "properties", "path": str(out_dir / "mm2" / "mm2.properties"), "key": "src.sasl.jaas.config"},
                {
                    "kind": "inline",
                    "text": json.loads((out_dir / "spark" / "source-options.json").read_text())[
                        "kafka.sasl.jaas.config"
                    ],
                },
            ]
            jaas_keys = {key for key in mm2.mm2_settings(loaded)[0] if key.endswith("jaas.config")}
            assert jaas_keys == {"src.sasl.jaas.config", "tgt.sasl.jaas.config"}, jaas_keys
        answers = jaas_parser.parse(requests)
        wrong = [(request["kind"], answer) for request, answer in zip(requests, answers) if answer != expected]
        if wrong:
            STATS["jaas_injections"] += 1
        assert wrong == [], f"expected {expected}"


# -- 4. the real entry point -----------------------------------------------------------------------------------------

SUBPROCESS_CASES = {
    "binary junk": lambda folder: b"\xff\xfe\x00\x80junk",
    "billion laughs": lambda folder: _laughs(12, 12).encode(),
    "deep nesting": lambda folder: _deep(100000, "flow-seq").encode(),
    "duplicate keys": lambda folder: b"version: 1\nversion: 1\n",
    "top-level list": lambda folder: b"- version: 1\n",
    "valid scram": lambda folder: yaml.safe_dump(base_profile(folder, ("scram", "oauth"))).encode(),
    "refused password": lambda folder: yaml.safe_dump(
        factory.profile_data(
            folder, target=factory.password(folder, "target", "PLAIN", value=f'x"\n{MARKER} debug=true')
        )
    ).encode(),
}


@pytest.mark.parametrize("case", sorted(SUBPROCESS_CASES))
def test_the_real_entry_point(case):
    with scratch() as folder:
        profile = write_bytes(folder, SUBPROCESS_CASES[case](folder))
        STATS["inputs"] += 1
        for argv in (["validate", str(profile)], ["render", str(profile), "--out", str(folder / "out")]):
            STATS["subprocess_runs"] += 1
            env = {**os.environ, "TMPDIR": str(folder)}  # a crash log would land here, and be found below
            result = subprocess.run(
                [sys.executable, "-m", "secure_mirror", *argv],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=REPO,
                env=env,
            )
            judge(argv[0], result.returncode, result.stdout, result.stderr, (MARKER,))
            assert not list(folder.glob("secure-mirror-error-*"))
        assert (folder / "out").exists() == (case == "valid scram")
