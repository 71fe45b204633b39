"""Hostile values through ``render``, read back by the programs that consume each rendered file.

For every generated profile (hostile but policy-valid values in every free-form field, hostile folder and file
names) the rendered files are read by their real readers and must say exactly what the profile says, nothing
more:

- ``client.properties`` and ``mm2.properties``: ``java.util.Properties.load`` (``jvm/tools/ReadBack.java``) gives
  exactly the settings the model computes;
- ``sasl.jaas.config`` (inline) and ``jaas.conf``: Kafka's ``JaasConfig`` and the JDK's ``ConfigFile``
  (``jvm/tools/JaasParse.java``) give exactly the login options;
- ``librdkafka.conf``: ``kcat -F FILE -X dump`` differs from kcat's defaults in exactly the rendered settings;
- ``krb5.conf``: MIT krb5's profile library (``tests/readers/krb5dump.c``) lists exactly the declared relations;
- ``spark-submit.sh`` and ``apply-acls.sh``: bash runs them with recording stand-ins for every command they may
  call; the recorded argument lists are exactly the intended ones and no other command ran;
- ``spark.*.extraJavaOptions``: Spark's ``Utils.splitCommandString`` and the launcher's ``parseOptionString``
  give exactly our options as words.

A profile the policy or an encoder refuses must be refused with a sentence naming the field (no traceback).
Seeded: the seed is printed (``SECURE_MIRROR_SEED=N`` repeats a run). Quick setting in CI, long with
``SECURE_MIRROR_RELIABILITY=long`` (see tests/reliability/conftest.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from secure_mirror import paths
from secure_mirror.errors import BadInputError
from secure_mirror.profile import load_profile, policy
from secure_mirror.render import acls, java_properties, librdkafka, mm2, render_all, spark
from secure_mirror.render.krb5 import default_realm
from tests.support import profiles as pf
from tests.support import seeds

from .conftest import LONG, STATS

pytestmark = [pytest.mark.reliability, pytest.mark.jvm]

REPO = Path(__file__).resolve().parents[2]
SEED = seeds.draw_seed("hypothesis @seed of the reader round trips")
EXAMPLES = 1500 if LONG else 100
print(f"test_render_readers: seed {SEED} (repeat with SECURE_MIRROR_SEED={SEED})", file=sys.stderr)


# Characters every reader treats specially somewhere, plus text any of them might mangle.
def rarely(usual, unusual, one_in: int = 12):
    """``unusual`` about once in ``one_in`` draws (st.one_of with repeats would not weigh: it deduplicates; and
    hypothesis favours an integer range's ends, so the unusual pick is one from the middle)."""
    return st.integers(min_value=0, max_value=one_in - 1).flatmap(lambda n: unusual if n == one_in // 2 else usual)


TROUBLE = list("'\"$`\\;&|<>(){}[]#!*?~=:,%@/ ^+-._") + ["${", "%{", "*/", "/*", "//", "\\n", "é", "漢", "🙂"]
_plain = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf"))
HOSTILE = st.lists(st.one_of(st.sampled_from(TROUBLE), _plain), min_size=1, max_size=24).map("".join)
LONG_TEXT = st.integers(min_value=400, max_value=2200).map(lambda n: ("x" * 97 + "=") * (n // 98 + 1))
VALUE = rarely(HOSTILE, LONG_TEXT)
BMP = HOSTILE.filter(lambda text: all(ord(char) <= 0xFFFF for char in text))
KRB5_WORD = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf", "Zs"), blacklist_characters='{}=#;"\\'),
    min_size=1,
    max_size=20,
)
KRB5_NAME = KRB5_WORD.filter(lambda t: not set(t) & set("*[]"))
OPTION_KEYS = ["client.id", "linger.ms", "request.timeout.ms", "metadata.max.age.ms", "x.custom-key_1"]


def _file_name(text: str) -> str:
    name = text.replace("/", "_").strip() or "f"
    name = "f" if name in (".", "..") else name
    while len(name.encode("utf-8")) > 120:
        name = name[:-1]
    return name


# ---- the real readers -------------------------------------------------------------------------------------------
class Jvm:
    """One JVM running a tool of jvm/tools for the whole module, one request per line."""

    def __init__(self, classpath: str, tool: str):
        self.process = subprocess.Popen(
            [
                paths.java_executable(),
                "-Dfile.encoding=UTF-8",
                "-Dsun.stdout.encoding=UTF-8",
                "-cp",
                classpath,
                str(REPO / "jvm" / "tools" / tool),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )

    def ask(self, line: str) -> str:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().rstrip("\n")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _unesc(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u":
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(nxt, nxt))
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


class Readers:
    def __init__(self, folder: Path):
        pyspark_jars = Path(__import__("pyspark").__file__).parent / "jars"
        self.readback = Jvm(f"{pyspark_jars}/*", "ReadBack.java")
        self.jaas = Jvm(paths.kafka_classpath(), "JaasParse.java")
        self.krb5dump = folder / "krb5dump"
        subprocess.run(
            ["cc", "-o", str(self.krb5dump), str(REPO / "tests" / "readers" / "krb5dump.c"), "-lkrb5"],
            check=True,
            capture_output=True,
        )
        empty = folder / "empty.conf"
        empty.write_text("")
        self.kcat_defaults = self.kcat(empty)

    def properties(self, path: Path) -> dict[str, str]:
        fields = [_unesc(f) for f in self.readback.ask(f"properties\t{_esc(str(path))}").split("\t")]
        assert fields[0] == "ok", fields
        return dict(zip(fields[1::2], fields[2::2]))

    def split(self, text: str) -> tuple[list[str], list[str]]:
        fields = [_unesc(f) for f in self.readback.ask(f"split\t{_esc(text)}").split("\t")]
        assert fields[0] == "spark" and "launcher" in fields, fields
        cut = fields.index("launcher")
        return fields[1:cut], fields[cut + 1 :]

    def jaas_options(self, request: dict) -> list[dict]:
        answer = json.loads(self.jaas.ask(json.dumps(request)))
        assert answer["ok"], answer
        return answer["entries"]

    def kcat(self, path: Path) -> dict[str, str]:
        result = subprocess.run(
            ["kcat", "-F", str(path), "-X", "dump"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        return dict(line.split(" = ", 1) for line in result.stdout.splitlines() if " = " in line)

    def krb5(self, path: Path) -> set[str]:
        result = subprocess.run(
            [str(self.krb5dump), str(path)], capture_output=True, text=True, encoding="utf-8", timeout=30
        )
        assert result.returncode == 0, result.stderr
        return set(result.stdout.splitlines())

    def close(self) -> None:
        self.readback.close()
        self.jaas.close()


@pytest.fixture(scope="module")
def readers(tmp_path_factory):
    needed = [shutil.which(paths.java_executable()), shutil.which("kcat"), shutil.which("cc"), shutil.which("bash")]
    if None in needed or not any(paths.kafka_lib_dir().glob("kafka-clients-*.jar")):
        pytest.skip("java, kcat, cc, bash or the Kafka jars (.deps/kafka/lib) are missing")
    tools = Readers(tmp_path_factory.mktemp("readers"))
    yield tools
    tools.close()
    print(
        f"\ntest_render_readers (seed {SEED}): {STATS['render_readers_rendered']} profiles rendered and read back "
        f"by every reader, {STATS['render_readers_refused']} refused with a sentence "
        f"({', '.join(f'{k[9:]}: {v}' for k, v in sorted(STATS.items()) if k.startswith('refused: '))})",
        file=sys.stderr,
    )


# ---- bash with stand-ins -----------------------------------------------------------------------------------------
STUB = """#!/bin/bash
{ printf '%s\\0' "${0##*/}" "$@"; printf '\\n'; } >> "$RECORD"
"""  # one line per call, arguments ended by NUL (no argument can hold NUL or a line feed)
UNEXPECTED = 'command_not_found_handle() { printf "%s\\n" "UNEXPECTED $1" >> "$RECORD"; return 127; }'


def run_script(script: Path, folder: Path, env: dict[str, str]) -> list[list[str]]:
    """Run ``script`` with bash, PATH holding only recording stand-ins; every command it ran, in order."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("kafka-acls.sh", "spark-submit", "install", "python3", "mktemp"):
        (bin_dir / name).write_text(STUB)
        (bin_dir / name).chmod(0o755)
    record = folder / "record.jsonl"
    record.unlink(missing_ok=True)
    wrapper = f'{UNEXPECTED}\nexport -f command_not_found_handle\nexec /bin/bash "$0" "$@"'
    result = subprocess.run(
        ["/bin/bash", "-c", wrapper, str(script)],
        cwd=folder,
        timeout=60,
        capture_output=True,
        text=True,
        env={"PATH": str(bin_dir), "RECORD": str(record), "HOME": str(folder), **env},
    )
    lines = record.read_text(encoding="utf-8").split("\n")[:-1] if record.exists() else []
    assert not [line for line in lines if line.startswith("UNEXPECTED")], (lines, result.stderr)
    assert result.returncode == 0, result.stderr
    return [line.split("\0")[:-1] for line in lines]


# ---- what the profile says -----------------------------------------------------------------------------------------
def expected_acl_calls(plan: acls.AclPlan, config: str) -> list[list[str]]:
    calls = []
    for b in plan.bindings:
        resource = {
            "TOPIC": ["--topic", b.resource_name],
            "GROUP": ["--group", b.resource_name],
            "CLUSTER": ["--cluster"],
        }[b.resource_type]
        calls.append(
            [
                "kafka-acls.sh",
                "--bootstrap-server",
                ",".join(plan.cluster.bootstrap_servers),
                "--command-config",
                config,
                "--add",
                "--allow-principal",
                b.principal,
                "--allow-host",
                b.host,
                "--operation",
                "".join(word.title() for word in b.operation.split("_")),  # PascalCase, as AclCommand reads it
                *resource,
                "--resource-pattern-type",
                b.pattern_type.lower(),
            ]
        )
    return calls


def expected_krb5(profile) -> set[str]:
    lines = {"libdefaults\t{", "realms\t{", "domain_realm\t{", f"libdefaults/default_realm\t{default_realm(profile)}"}
    lines |= {
        f"libdefaults/{k}\t{v}"
        for k, v in (
            ("dns_lookup_kdc", "false"),
            ("dns_lookup_realm", "false"),
            ("dns_canonicalize_hostname", "false"),
            ("rdns", "false"),
            ("forwardable", "true"),
        )
    }
    for name, realm in profile.kerberos.realms.items():
        lines.add(f"realms/{name}\t{{")
        lines |= {f"realms/{name}/kdc\t{kdc}" for kdc in realm.kdcs}
        if realm.admin_server:
            lines.add(f"realms/{name}/admin_server\t{realm.admin_server}")
        for domain in realm.domains:
            lines |= {f"domain_realm/.{domain.strip('.')}\t{name}", f"domain_realm/{domain.strip('.')}\t{name}"}
    return {line.replace("\\", "\\\\") for line in lines}


def _jaas_expected(cluster, side: str, keytab: str | None = None) -> dict:
    from secure_mirror.profile.security import GssapiSasl

    sasl = cluster.sasl
    if isinstance(sasl, GssapiSasl):
        options = {
            "useKeyTab": "true",
            "storeKey": "true",
            "useTicketCache": "false",
            "serviceName": sasl.service_name,
            "keyTab": keytab or str(sasl.keytab),
            "principal": sasl.principal,
        }
        return {
            "loginModule": "com.sun.security.auth.module.Krb5LoginModule",
            "controlFlag": "required",
            "options": options,
        }
    module = "plain.PlainLoginModule" if sasl.mechanism == "PLAIN" else "scram.ScramLoginModule"
    return {
        "loginModule": f"org.apache.kafka.common.security.{module}",
        "controlFlag": "required",
        "options": {"username": sasl.username, "password": sasl.password.resolve()},
    }


# ---- the property -------------------------------------------------------------------------------------------------
@st.composite
def hostile_profile(draw, folder: Path) -> tuple[dict, Path]:
    keytab_name = _file_name(draw(rarely(HOSTILE.filter(lambda t: not set(t) & set('"$`\\')), HOSTILE, 8)))
    keytab_name += ".keytab"  # ", $, ` and \ are refused for librdkafka's kinit command (sh), the rest must work
    out = folder / "out" / _file_name(draw(BMP))  # beyond U+FFFF: refused, see test_jvm_options_refuse_...
    source = pf.password(
        folder / _file_name(draw(HOSTILE)),
        "source",
        draw(st.sampled_from(["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"])),
        value=draw(VALUE),
    )
    source["sasl"]["username"] = draw(VALUE)
    target = pf.gssapi(folder, "target")
    target["sasl"]["keytab"] = pf.keytab(folder / "kt" / keytab_name)
    target["sasl"]["service_name"] = draw(HOSTILE)
    source["client_options"] = {key: draw(VALUE) for key in draw(st.lists(st.sampled_from(OPTION_KEYS), max_size=3))}
    target["client_options"] = {draw(st.sampled_from(OPTION_KEYS)): draw(VALUE)}
    data = pf.profile_data(folder, source=source, target=target)
    realms = data["kerberos"]["realms"]
    realms["TARGET.TEST"]["kdcs"] = [draw(KRB5_WORD), draw(KRB5_WORD)]
    realms["TARGET.TEST"]["domains"] = [draw(KRB5_NAME)]
    realms["SOURCE.TEST"]["admin_server"] = draw(KRB5_WORD)
    data["mirror"]["spark"] = {
        "master": draw(VALUE),
        "deploy_mode": draw(st.sampled_from(["client", "cluster"])),
        "conf": {"spark.app.name": draw(VALUE)},
    }
    data["mirror"]["mm2"] = {"properties": {"emit.checkpoints.interval.seconds": draw(VALUE)}}
    return data, out


def _fresh(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR", "/tmp")))


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(data=st.data())
def test_hostile_values_read_back_exactly_by_every_real_reader(readers, data):
    folder = _fresh("sm-readers-")
    try:
        profile_data, out = data.draw(hostile_profile(folder))
        STATS["inputs"] += 1
        try:
            profile = load_profile(pf.write_profile(folder, profile_data))
            render_all(profile, out)
        except BadInputError as refused:  # a sentence naming the field, never the value
            message = str(refused)
            assert "Traceback" not in message and message.count("\n") <= 1 + message.count("\n  - "), message
            STATS["render_readers_refused"] += 1
            STATS[f"refused: {message.splitlines()[-1].split(': ')[0].strip(' -')}"] += 1
            return
        STATS["render_readers_rendered"] += 1
        _check_properties(readers, profile, out)
        _check_jaas(readers, profile, out)
        _check_librdkafka(readers, profile, out)
        assert readers.krb5(out / "krb5.conf") == expected_krb5(profile)
        _check_scripts(readers, profile, out, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _check_properties(readers: Readers, profile, out: Path) -> None:
    for side, cluster in profile.clusters().items():
        assert readers.properties(out / side / "client.properties") == java_properties.client_properties(cluster, side)
    assert readers.properties(out / "mm2" / "mm2.properties") == mm2.mm2_settings(profile)[0]
    for name, options in (
        ("source-options.json", spark.source_options(profile)),
        ("sink-options.json", spark.sink_options(profile)),
    ):
        assert json.loads((out / "spark" / name).read_text(encoding="utf-8")) == options


def _check_jaas(readers: Readers, profile, out: Path) -> None:
    for side, cluster in profile.clusters().items():
        expected = [_jaas_expected(cluster, side)]
        assert (
            readers.jaas_options({"kind": "file", "path": str(out / side / "jaas.conf"), "section": "KafkaClient"})
            == expected
        )
        assert (
            readers.jaas_options(
                {"kind": "properties", "path": str(out / side / "client.properties"), "key": "sasl.jaas.config"}
            )
            == expected
        )


def _check_librdkafka(readers: Readers, profile, out: Path) -> None:
    for side, cluster in profile.clusters().items():
        intended = {key: value for key, (value, _) in librdkafka.librdkafka_config(cluster, side).items()}
        intended["metadata.broker.list"] = intended.pop("bootstrap.servers")
        dumped = readers.kcat(out / side / "librdkafka.conf")
        changed = {
            key: value
            for key, value in dumped.items()
            if readers.kcat_defaults.get(key) != value and not key.endswith("_cb")
        }  # _cb: pointers
        assert {key: dumped.get(key) for key in intended} == intended
        assert set(changed) <= set(intended), sorted(set(changed) - set(intended))


def _check_scripts(readers: Readers, profile, out: Path, folder: Path) -> None:
    calls = run_script(
        out / "acls" / "apply-acls.sh",
        folder,
        {"SOURCE_ADMIN_CONFIG": "/admin/src.properties", "TARGET_ADMIN_CONFIG": "/admin/tgt.properties"},
    )
    assert calls == (
        expected_acl_calls(acls.source_acls(profile), "/admin/src.properties")
        + expected_acl_calls(acls.target_acls(profile), "/admin/tgt.properties")
    )
    calls = run_script(out / "spark" / "spark-submit.sh", folder, {})
    submit = [call for call in calls if call[0] == "spark-submit"]
    assert len(submit) == 1 and calls[-1] == submit[0]
    argv = submit[0][1:]
    conf = spark.spark_conf(profile, out)
    assert argv[:6] == [
        "--master",
        profile.mirror.spark.master,
        "--deploy-mode",
        profile.mirror.spark.deploy_mode,
        "--jars",
        conf["spark.jars"],
    ]
    confs = [argv[i + 1] for i, word in enumerate(argv) if word == "--conf"]
    assert confs == [f"{k}={v}" for k, v in conf.items() if k != "spark.jars"]
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        words = [f"-Djava.security.krb5.conf={path}" for path in _krb5_paths(profile, out, key)]
        assert readers.split(conf[key]) == (words, words)
    installs = [call[1:] for call in calls if call[0] == "install"]
    assert all(call[:3] == ["-m", "600", "--"] and len(call) == 5 for call in installs)
    assert (
        argv[-3:]
        == ["--options-dir", "." if profile.mirror.spark.deploy_mode == "cluster" else str(out / "spark"), *argv[-1:]]
        or argv[-2] == "--options-dir"
    )


def _krb5_paths(profile, out: Path, key: str) -> list[str]:
    shipped = not profile.mirror.spark.is_local
    cluster_mode = profile.mirror.spark.deploy_mode == "cluster"
    if key.startswith("spark.driver"):
        return [spark.SHIPPED_KRB5 if cluster_mode else str(out / "krb5.conf")]
    return [spark.SHIPPED_KRB5 if shipped else str(out / "krb5.conf")]


# ---- the refusals, one per class ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("char", ["\n", "\r", "\x85", "\u2028", "\u2029", "\x00", "\x1b", "\x7f", "\u202e", "\t"])
@pytest.mark.parametrize(
    "where",
    [
        "source.sasl.username",
        "mirror.spark.master",
        "target.client_options.client.id",
        "kerberos.realms.SOURCE.TEST.domains.0",
        "mirror.checkpoint_location",
    ],
)
def test_policy_refuses_each_forbidden_character_with_the_field(tmp_path, char, where):
    data = pf.profile_data(tmp_path, source=pf.password(tmp_path, "source", "SCRAM-SHA-512"))
    node, *path, last = where.split(".")
    if where.startswith("kerberos.realms"):
        data["kerberos"]["realms"]["SOURCE.TEST"]["domains"][0] = f"a{char}b"
    elif where.startswith("target.client_options"):
        data["target"]["client_options"] = {"client.id": f"a{char}b"}
    else:
        parent = data[node]
        for part in path:
            parent = parent.setdefault(part, {})
        parent[last] = f"a{char}b"
    with pytest.raises(BadInputError) as caught:
        load_profile(pf.write_profile(tmp_path, data))
    assert f"{where}: contains {policy.describe(char)} at character 2" in str(caught.value)


def test_folders_from_the_command_line_follow_the_policy(tmp_path):
    profile = load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))
    with pytest.raises(BadInputError, match=r"^--out .*a line feed \(U\+000A\)"):
        render_all(profile, tmp_path / "evil\nsecurity.protocol=PLAINTEXT")
    assert not (tmp_path / "evil\nsecurity.protocol=PLAINTEXT").exists()


def test_a_long_line_cannot_become_a_krb5_setting(tmp_path, readers):
    """MIT's parser reads 2048 bytes per line: a longer value would leave its tail as a line of its own."""
    data = pf.profile_data(tmp_path)
    data["kerberos"]["realms"]["SOURCE.TEST"]["kdcs"] = ["k" * 2100]
    with pytest.raises(BadInputError, match="kerberos.realms.SOURCE.TEST.kdcs: the value contains more than"):
        render_all(load_profile(pf.write_profile(tmp_path, data)), tmp_path / "out")
    # what the refusal prevents, shown with the reader itself: MIT refuses the whole file, so no client could log in
    conf = tmp_path / "raw.conf"
    conf.write_text("[libdefaults]\n    default_realm = " + "k" * 2100 + "\n")
    assert subprocess.run([str(readers.krb5dump), str(conf)], capture_output=True).returncode != 0


def test_a_long_comment_cannot_become_a_librdkafka_setting(tmp_path, readers):
    """kcat reads 511 bytes per line: the tail of a longer comment line is read as a setting."""
    conf = tmp_path / "raw.conf"
    conf.write_text("# " + "c" * 509 + "enable.ssl.certificate.verification=false\n")
    assert readers.kcat(conf).get("enable.ssl.certificate.verification") == "false"
    profile = load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))
    with pytest.raises(BadInputError, match="--out: the value contains more than"):
        render_all(profile, tmp_path / ("d" * 250) / ("e" * 250))


@pytest.mark.parametrize(
    "key",
    [
        "SASL.JAAS.CONFIG",
        "Security.Protocol",
        "producer.SSL.truststore.location",
        "config.providers",
        "CONFIG.PROVIDERS.file.class",
        "consumer.config.providers",
    ],
)
def test_protected_options_are_compared_as_spark_compares_them(tmp_path, key):
    data = pf.profile_data(tmp_path)
    data["source"]["client_options"] = {key: "x"}
    with pytest.raises(BadInputError) as caught:
        load_profile(pf.write_profile(tmp_path, data))
    assert f"source.client_options.{key}: overrides a security or bootstrap setting" in str(caught.value)


@pytest.mark.parametrize("name", ["*0", "[capaths]", '"q"', "a\\b", "x*", "]", "a}"])
def test_krb5_names_mit_would_cut_or_read_as_structure_are_refused(tmp_path, name):
    data = pf.profile_data(tmp_path)
    data["kerberos"]["realms"]["TARGET.TEST"]["domains"] = [name]
    with pytest.raises(BadInputError, match="kerberos.realms.TARGET.TEST.domains.0: string should match pattern"):
        load_profile(pf.write_profile(tmp_path, data))


def test_jvm_options_refuse_characters_spark_launcher_would_split(tmp_path, readers):
    """The launcher's parseOptionString steps by UTF-16 unit and appends whole code points: U+1F642 comes out
    doubled. The option would name another file, so the folder is refused."""
    smile = chr(0x1F642)
    spark_words, launcher_words = readers.split(f'"-Dx={smile}"')
    assert spark_words == [f"-Dx={smile}"] and launcher_words != spark_words
    profile = load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))
    with pytest.raises(BadInputError, match="krb5.conf path: the value contains a character beyond U"):
        render_all(profile, tmp_path / f"out{smile}")
