"""The warning channel (``profile/warnings.py``): every setting that is legal but weakens the run is named with its
exact field, its finding and its fix; Spark redaction patterns that hide less than Spark's defaults are refused;
``--strict`` makes warnings errors in validate, render and ``run --skip-preflight``; no warning holds a secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import secure_mirror.commands.run as run_command
from secure_mirror.cli import main
from secure_mirror.profile import ProfileError, load_profile, profile_warnings
from secure_mirror.profile.jvm_options import split_options
from secure_mirror.profile.redaction import SPARK_REDACTION_DEFAULTS, keeps, top_level_alternatives
from secure_mirror.profile.warnings import debug_flags
from tests.support import profiles as pf

WORD_SECRET = "s3cr3t-value"  # a secret Spark's option splitter keeps as one word
SECRET_DEFAULT = SPARK_REDACTION_DEFAULTS["spark.redaction.regex"]  # (?i)secret|password|token|access[.]?key


def _load(tmp_path: Path, data: dict):
    return load_profile(pf.write_profile(tmp_path, data))


def _fields(tmp_path: Path, data: dict) -> list[str]:
    return [warning.field for warning in profile_warnings(_load(tmp_path, data))]


def _problems(tmp_path: Path, data: dict) -> list[str]:
    with pytest.raises(ProfileError) as caught:
        _load(tmp_path, data)
    return caught.value.problems


def _spark(tmp_path: Path, conf: dict, **spark) -> dict:
    return pf.profile_data(tmp_path, spark={"conf": conf, **spark})


def test_a_plain_profile_has_no_warning(tmp_path):
    assert profile_warnings(pf.load(tmp_path)) == []


def test_a_warning_reads_field_finding_fix(tmp_path):
    data = pf.profile_data(tmp_path, source_isolation_level="read_uncommitted")
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert str(warning) == (
        "mirror.source_isolation_level: read_uncommitted: records of aborted and open transactions are copied as "
        "committed records; drop it (read_committed is the default) unless no producer of the source uses transactions"
    )
    assert warning.section == "mirror"


# ---- the cases validate warned about before, and pre-flight's weak settings -----------------------------------------
def test_no_kerberos_section(tmp_path):
    data = pf.profile_data(tmp_path)
    del data["kerberos"]
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert str(warning) == (
        "kerberos: not set, so clients use the system krb5.conf; declare kerberos.realms or kerberos.krb5_conf"
    )


def test_a_truststore_librdkafka_cannot_read(tmp_path):
    source = pf.gssapi(tmp_path, "source")
    (tmp_path / "trust.p12").write_bytes(b"x")
    source["tls"] = {"ca": str(tmp_path / "trust.p12"), "truststore_password": pf.secret_file(tmp_path / "tp", "pw")}
    (warning,) = profile_warnings(_load(tmp_path, pf.profile_data(tmp_path, source=source)))
    assert str(warning) == (
        "source.tls.ca: librdkafka (kcat) cannot read a PKCS12 truststore; also provide the CA as PEM to use "
        "librdkafka.conf"
    )


def test_hostname_verification_off(tmp_path):
    (warning,) = profile_warnings(_load(tmp_path, pf.profile_data(tmp_path, target=pf.mutual_tls(tmp_path, "target"))))
    assert str(warning) == (
        "target.tls.hostname_verification: off, so any certificate the CA signed is accepted for any broker; set "
        "target.tls.hostname_verification: true and connect by the names the certificates list"
    )


def test_plain_over_sasl_plaintext(tmp_path):
    target = pf.password(tmp_path, "target", "PLAIN", protocol="SASL_PLAINTEXT")
    (warning,) = profile_warnings(_load(tmp_path, pf.profile_data(tmp_path, target=target)))
    assert str(warning) == (
        "target.security_protocol: PLAIN over SASL_PLAINTEXT sends the password unencrypted to every broker; use "
        "security_protocol SASL_SSL on target"
    )


def test_scram_over_sasl_plaintext_is_no_weak_setting(tmp_path):
    target = pf.password(tmp_path, "target", "SCRAM-SHA-512", protocol="SASL_PLAINTEXT")
    assert _fields(tmp_path, pf.profile_data(tmp_path, target=target)) == []


GRANTS_TO_ANONYMOUS = (
    "so the rendered ACLs grant the mirror's rights (its topics, groups and transactional ids) to User:ANONYMOUS, "
    "every client that reaches the brokers' listener without authenticating"
)


@pytest.mark.parametrize("protocol", ["PLAINTEXT", "SSL"])
def test_an_unauthenticated_side_grants_to_anonymous(tmp_path, protocol):
    source = pf.plaintext(tmp_path, "source")
    if protocol == "SSL":
        source.update(security_protocol="SSL", tls={"ca": pf.ca(tmp_path)})
    (warning,) = profile_warnings(_load(tmp_path, pf.profile_data(tmp_path, source=source)))
    assert str(warning) == (
        f"source.security_protocol: {protocol} without a client certificate authenticates no one, "
        f"{GRANTS_TO_ANONYMOUS}; authenticate the mirror: security_protocol SASL_SSL with a sasl section, or SSL "
        "with tls.certificate and tls.key, on source"
    )


def _anonymous_by(tmp: Path, field: str) -> dict:
    """A target identity the brokers name User:ANONYMOUS through ``field``."""
    if field == "sasl.username":
        target = pf.password(tmp, "target", "SCRAM-SHA-512")
        target["sasl"]["username"] = "ANONYMOUS"
        return target
    target = pf.gssapi(tmp, "target")
    if field == "sasl.kafka_principal":
        target["sasl"]["kafka_principal"] = "User:ANONYMOUS"
    else:
        target["principal_mapping"] = {"principal_to_local_rules": ["RULE:[2:ANONYMOUS]"]}
    return target


@pytest.mark.parametrize(
    "field", ["sasl.kafka_principal", "sasl.username", "principal_mapping.principal_to_local_rules"]
)
def test_an_identity_the_brokers_name_anonymous(tmp_path, field):
    data = pf.profile_data(tmp_path, target=_anonymous_by(tmp_path, field))
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert str(warning) == (
        f"target.{field}: the brokers see the mirror as User:ANONYMOUS, the principal of unauthenticated clients, "
        f"{GRANTS_TO_ANONYMOUS}; give the mirror an identity of its own, which the brokers name otherwise"
    )


def test_a_name_that_is_not_kafkas_anonymous_is_no_warning(tmp_path):
    data = pf.profile_data(tmp_path)
    data["target"]["sasl"]["kafka_principal"] = "User:anonymous"  # Kafka compares principals with case
    assert _fields(tmp_path, data) == []


def test_an_http_token_endpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", pf.PASSWORD)
    source = pf.oauth(tmp_path, "source")
    source["sasl"]["token_endpoint_url"] = "http://idp.example.com/token"
    (warning,) = profile_warnings(_load(tmp_path, pf.profile_data(tmp_path, source=source)))
    assert str(warning) == (
        "source.sasl.token_endpoint_url: plain http: the client secret and the tokens travel unencrypted; use an "
        "https:// source.sasl.token_endpoint_url"
    )


def test_the_brokers_own_principal(tmp_path):
    data = pf.profile_data(tmp_path)
    data["source"]["sasl"]["principal"] = "kafka/kafka.source.test@SOURCE.TEST"
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert warning.field == "source.sasl.principal"
    assert warning.finding == (
        "the mirror logs in as kafka/kafka.source.test@SOURCE.TEST, a principal of the brokers' own service "
        "(kafka/...), which brokers usually list as a super user"
    )


# ---- secret files: keytabs, password files, the mutual-TLS key -----------------------------------------------------
def _with_secret_files(tmp_path: Path) -> tuple[dict, dict[str, Path]]:
    """Every kind of secret file the profile can name, and their paths by field."""
    data = pf.profile_data(
        tmp_path,
        source=pf.password(tmp_path, "source", "SCRAM-SHA-512"),
        target=pf.mutual_tls(tmp_path, "target"),
        spark={"master": "yarn"},
    )
    data["target"]["tls"]["hostname_verification"] = True
    data["target"]["tls"]["key_password"] = pf.secret_file(tmp_path / "target" / "key-password.txt", "kp")
    data["hadoop"] = {
        "properties": {"core-site.xml": {"fs.defaultFS": "hdfs://nn.source.test:8020"}},
        "principal": "mirror/mirror.source.test@SOURCE.TEST",
        "keytab": pf.keytab(tmp_path / "hadoop" / "mirror.keytab"),
    }
    paths = {
        "source.sasl.password": tmp_path / "source" / "password.txt",
        "target.tls.key": tmp_path / "target" / "client.key",
        "target.tls.key_password": tmp_path / "target" / "key-password.txt",
        "hadoop.keytab": tmp_path / "hadoop" / "mirror.keytab",
    }
    return data, paths


def test_secret_files_others_can_read(tmp_path):
    data, paths = _with_secret_files(tmp_path)
    assert _fields(tmp_path, data) == []
    for path in paths.values():
        path.chmod(0o640)
    warnings = {w.field: w for w in profile_warnings(_load(tmp_path, data))}
    assert list(warnings) == ["source.sasl.password", "target.tls.key", "target.tls.key_password", "hadoop.keytab"]
    what = ["password file", "private key", "password file", "keytab"]
    for (field, path), kind in zip(paths.items(), what):
        assert warnings[field].finding == (
            f"{kind} {path} has mode 0640 (group/others can access it): anyone who reads it can act as the mirror"
        )
        assert warnings[field].fix == f"chmod 0600 {path}"


def test_a_keytab_and_a_client_secret_file(tmp_path):
    source = pf.oauth(tmp_path, "source")
    source["sasl"]["client_secret"] = pf.secret_file(tmp_path / "source" / "client-secret.txt", pf.PASSWORD)
    data = pf.profile_data(tmp_path, source=source)
    (tmp_path / "source" / "client-secret.txt").chmod(0o604)
    (tmp_path / "target" / "mirror.keytab").chmod(0o620)
    warnings = profile_warnings(_load(tmp_path, data))
    assert [(w.field, w.finding.split(" ", 1)[0]) for w in warnings] == [
        ("source.sasl.client_secret", "client"),
        ("target.sasl.keytab", "keytab"),
    ]
    assert "mode 0604" in warnings[0].finding and "mode 0620" in warnings[1].finding


def test_a_secret_file_named_through_a_symbolic_link(tmp_path):
    data = pf.profile_data(tmp_path)
    real = Path(data["source"]["sasl"]["keytab"])
    link = tmp_path / "link.keytab"
    link.symlink_to(real)
    data["source"]["sasl"]["keytab"] = str(link)
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert warning.field == "source.sasl.keytab"
    assert warning.finding == (
        f"keytab {link} is a symbolic link to {real} (whoever can change the link chooses the file read): anyone "
        "who reads it can act as the mirror"
    )
    assert warning.fix == f"name the file itself ({real}) instead of the link"


def test_a_secret_file_another_user_owns(tmp_path, monkeypatch):
    data = pf.profile_data(tmp_path, target=pf.password(tmp_path, "target", "SCRAM-SHA-256"))
    profile = _load(tmp_path, data)
    path = tmp_path / "target" / "password.txt"
    path.chmod(0o644)
    owner, me = path.stat().st_uid, path.stat().st_uid + 4242
    monkeypatch.setattr(os, "getuid", lambda: me)
    warnings = {w.field: w for w in profile_warnings(profile)}
    assert set(warnings) == {"source.sasl.keytab", "target.sasl.password"}  # this "user" owns neither
    assert warnings["target.sasl.password"].finding == (
        f"password file {path} is owned by uid {owner}, not by this user (uid {me}) and has mode 0644 (group/others "
        "can access it): anyone who reads it can act as the mirror"
    )
    assert (
        warnings["target.sasl.password"].fix
        == f"give it to this user (chown {me} {path}, as root) and chmod 0600 {path}"
    )


def test_an_env_secret_is_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", pf.PASSWORD)
    assert _fields(tmp_path, pf.profile_data(tmp_path, source=pf.oauth(tmp_path, "source"))) == []


# ---- class-loading client settings ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    [
        "metric.reporters",
        "interceptor.classes",
        "consumer.interceptor.classes",
        "producer.interceptor.classes",
        "security.providers",
        "Consumer.Metric.Reporters",
    ],
)
def test_class_loading_client_options(tmp_path, key):
    data = pf.profile_data(tmp_path)
    data["target"]["client_options"] = {key: "com.example.Spy", "retries": 5}
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert warning.field == f"target.client_options.{key}"
    assert warning.finding == (
        "loads the classes it names into the mirror's clients (Spark's driver and executors, MirrorMaker 2's "
        "workers), which hold both clusters' credentials "
        "(keytabs, passwords, TLS keys); any such class can read and send them"
    )
    assert warning.fix == "remove it, or name only classes from jars your security team has reviewed"


@pytest.mark.parametrize(
    "key", ["metric.reporters", "tgt.producer.interceptor.classes", "src.consumer.metric.reporters"]
)
def test_class_loading_mm2_properties(tmp_path, key):
    data = pf.profile_data(tmp_path, mm2={"properties": {key: "com.example.Spy"}})
    (warning,) = profile_warnings(_load(tmp_path, data))
    assert warning.field == f"mirror.mm2.properties.{key}"
    assert "into MirrorMaker 2's workers" in warning.finding


def test_an_empty_class_list_loads_nothing(tmp_path):
    data = pf.profile_data(tmp_path, mm2={"properties": {"metric.reporters": ""}})
    data["source"]["client_options"] = {"metric.reporters.sample": "x", "interceptor.classes": " "}
    assert _fields(tmp_path, data) == []


# ---- Spark: debug flags and KRB5_TRACE ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "value", "flag"),
    [
        ("spark.driver.extraJavaOptions", "-Xmx1g -Dsun.security.krb5.debug=true", "-Dsun.security.krb5.debug=true"),
        ("spark.executor.extraJavaOptions", '"-Dsun.security.jgss.debug=TRUE"', "-Dsun.security.jgss.debug=true"),
        ("spark.yarn.am.extraJavaOptions", "'-Dsun.security.spnego.debug=true'", "-Dsun.security.spnego.debug=true"),
        ("spark.executor.extraJavaOptions", "-Djavax.net.debug=ssl:handshake", "-Djavax.net.debug"),
        ("spark.driver.extraJavaOptions", "-Djavax.net.debug", "-Djavax.net.debug"),
        ("spark.driver.defaultJavaOptions", "-Djava.security.debug=all", "-Djava.security.debug"),
        ("spark.executorEnv.JAVA_TOOL_OPTIONS", "-Dsun.security.krb5.debug=true", "-Dsun.security.krb5.debug=true"),
    ],
)
def test_debug_flags_in_java_options(tmp_path, key, value, flag):
    (warning,) = profile_warnings(_load(tmp_path, _spark(tmp_path, {key: value})))
    assert warning.field == f"mirror.spark.conf.{key}"
    assert warning.finding.startswith(f"{flag} prints ")
    assert warning.finding.endswith(" into the JVM's output, which Spark keeps in its logs")
    assert warning.fix == f"remove {flag} (set it only to debug a failing login, then delete the logs)"


@pytest.mark.parametrize(
    "value",
    [
        "-Dsun.security.krb5.debug=false",
        "-Djava.security.debug=",
        "-Dsun.security.krb5.debugger=true",
        "-XX:+UseG1GC '-Dmy.sun.security.krb5.debug=true'",
    ],
)
def test_options_that_print_nothing(tmp_path, value):
    assert _fields(tmp_path, _spark(tmp_path, {"spark.executor.extraJavaOptions": value})) == []


@pytest.mark.parametrize("key", ["spark.driver.extraClassPath", "spark.executor.extraClassPath"])
def test_a_class_path_in_the_spark_conf(tmp_path, key):
    (warning,) = profile_warnings(_load(tmp_path, _spark(tmp_path, {key: "/opt/extra.jar"})))
    assert str(warning) == (
        f"mirror.spark.conf.{key}: puts the jars and folders it names first on the class path of Spark's driver or "
        "executors, which hold both clusters' credentials (keytabs, passwords, TLS keys): their classes are loaded "
        "before Spark's and Kafka's own; remove it, or set it in the Spark configuration of the machine that submits "
        "(spark-defaults.conf in SPARK_CONF_DIR), naming only what your security team has reviewed"
    )


def test_krb5_trace_in_the_executors_and_the_application_master(tmp_path):
    conf = {"spark.executorEnv.KRB5_TRACE": "/dev/stderr", "spark.yarn.appMasterEnv.KRB5_TRACE": "/tmp/t"}
    warnings = profile_warnings(_load(tmp_path, _spark(tmp_path, conf)))
    assert [w.field for w in warnings] == [f"mirror.spark.conf.{key}" for key in conf]
    assert warnings[0].finding == (
        "KRB5_TRACE makes MIT Kerberos write a trace of every ticket exchange (principals, tickets, the start of each "
        "key) to the file it names"
    )


def test_spark_splits_java_options_as_spark_does():
    assert split_options(""" -Da=1  "-Db=two words" '-Dc="x"' -Dd="q\\"r" e\\f """) == [
        "-Da=1",
        "-Db=two words",
        '-Dc="x"',
        '-Dd=q"r',
        "e\\f",
    ]
    assert split_options('""') == [""] and split_options("   ") == []
    flags = debug_flags("-Dx=1 -Dsun.security.krb5.debug=True -Djavax.net.debug=all -Djava.security.debug=")
    assert [flag for flag, _ in flags] == ["-Dsun.security.krb5.debug=true", "-Djavax.net.debug"]


# ---- Spark's redaction patterns: refused when they hide less than Spark's defaults ---------------------------------
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.redaction.regex", "(?i)secret"),
        ("spark.redaction.regex", "(?i)secret|password|token"),
        ("spark.redaction.regex", "(?i)mine|secret|password|token|access[.]?key"),  # 'secret' is no longer (?i)
        ("spark.redaction.regex", f"({SECRET_DEFAULT})x"),
        ("spark.redaction.regex", f"\\Q{SECRET_DEFAULT}"),
        ("spark.redaction.regex", f"(?x)#|{SECRET_DEFAULT}"),
        ("spark.redaction.regex", True),
        ("spark.sql.redaction.options.regex", "(?i)jdbc"),
        ("spark.sql.redaction.options.regex", "url"),
    ],
)
def test_a_redaction_pattern_that_hides_less_is_refused(tmp_path, key, value):
    default = SPARK_REDACTION_DEFAULTS[key]
    shows = {
        "spark.redaction.regex": "settings and environment variables holding passwords, secrets, tokens and access keys",
        "spark.sql.redaction.options.regex": "SQL options holding URLs (which often carry credentials)",
    }[key]
    assert _problems(tmp_path, _spark(tmp_path, {key: value})) == [
        f"mirror.spark.conf.{key}: replaces Spark's default pattern {default} and does not keep it, so {shows} that "
        "it no longer finds would show in the Spark UI, event logs and YARN logs; keep the default as an "
        f"alternative: write {default}|<yours>"
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("spark.redaction.regex", SECRET_DEFAULT),
        ("spark.redaction.regex", f"{SECRET_DEFAULT}|passphrase|credential"),
        ("spark.redaction.regex", f"(?i)[|]kerb|{SECRET_DEFAULT}"),
        ("spark.sql.redaction.options.regex", "(?i)url|(?i)jdbc"),
    ],
)
def test_a_redaction_pattern_that_keeps_the_default_is_accepted(tmp_path, key, value):
    assert _fields(tmp_path, _spark(tmp_path, {key: value})) == []


def test_top_level_alternatives_of_a_java_regex():
    assert top_level_alternatives("a|(b|c)|[|]|[]|]|[^]|]|\\||\\Q|\\E|[a[|]]|d") == [
        "a",
        "(b|c)",
        "[|]",
        "[]|]",
        "[^]|]",
        "\\|",
        "\\Q|\\E",
        "[a[|]]",
        "d",
    ]
    assert keeps(f"x|{SECRET_DEFAULT}|y", SECRET_DEFAULT) and not keeps("(?i)secret|password", SECRET_DEFAULT)


# ---- no secret in any warning ---------------------------------------------------------------------------------------
def _leaky(tmp_path: Path) -> Path:
    """A profile with many warnings around secret values: an exposed password file, a trust store password in the
    Java options next to a debug flag, a debug option whose value is the secret."""
    data = pf.profile_data(tmp_path, target=pf.password(tmp_path, "target", "PLAIN", protocol="SASL_PLAINTEXT"))
    data["mirror"]["spark"] = {
        "conf": {
            "spark.executor.extraJavaOptions": f"-Djavax.net.debug={pf.PASSWORD} "
            f"-Djavax.net.ssl.trustStorePassword={pf.PASSWORD}",
            "spark.driver.extraJavaOptions": f"-Djavax.net.ssl.keyStorePassword={WORD_SECRET} -Dsun.security.krb5.debug=true",
            "spark.executorEnv.KRB5_TRACE": pf.PASSWORD,
        }
    }
    data["target"]["client_options"] = {"metric.reporters": pf.PASSWORD}
    path = pf.write_profile(tmp_path, data)
    (tmp_path / "target" / "password.txt").chmod(0o644)
    return path


def test_no_warning_holds_a_secret_value(tmp_path, capsys):
    path = _leaky(tmp_path)
    warnings = profile_warnings(load_profile(path))
    assert len(warnings) == 6
    for text in map(str, warnings):
        assert pf.PASSWORD not in text and 'p"a' not in text and WORD_SECRET not in text
    assert main(["validate", str(path)]) == 0
    assert main(["validate", "--strict", str(path)]) == 2
    assert main(["render", "--strict", str(path), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("warning: ") == 6
    assert pf.PASSWORD not in captured.out + captured.err and WORD_SECRET not in captured.out + captured.err


# ---- the commands: printed as warning: <field>: <finding>; <fix>, and --strict ----------------------------------------
def _warned(tmp_path: Path) -> tuple[Path, list[str]]:
    data = pf.profile_data(tmp_path, source_isolation_level="read_uncommitted")
    data["source"]["client_options"] = {"interceptor.classes": "com.example.Spy"}
    path = pf.write_profile(tmp_path, data)
    return path, [str(warning) for warning in profile_warnings(load_profile(path))]


def test_validate_prints_warnings_and_strict_refuses(tmp_path, capsys):
    path, warnings = _warned(tmp_path)
    assert [w.split(":", 1)[0] for w in warnings] == [
        "source.client_options.interceptor.classes",
        "mirror.source_isolation_level",
    ]
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"warning: {warning}" for warning in warnings]
    assert captured.out.startswith("profile OK")
    assert main(["validate", "--strict", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"secure-mirror validate: {path}: 2 problems:",
        *(f"  - {warning}" for warning in warnings),
    ]


def test_strict_passes_a_profile_without_warnings(tmp_path, capsys):
    path = pf.write_profile(tmp_path, pf.profile_data(tmp_path))
    assert main(["validate", "--strict", str(path)]) == 0
    assert main(["render", "--strict", str(path), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == ""


def test_render_prints_warnings_and_strict_renders_nothing(tmp_path, capsys):
    path, warnings = _warned(tmp_path)
    out = tmp_path / "out"
    assert main(["render", "--strict", str(path), "--out", str(out)]) == 2
    assert not out.exists()
    assert capsys.readouterr().err.splitlines()[1:] == [f"  - {warning}" for warning in warnings]
    assert main(["render", str(path), "--out", str(out)]) == 0
    assert (out / "MANIFEST.md").exists()
    assert capsys.readouterr().err.splitlines() == [f"warning: {warning}" for warning in warnings]


def test_run_prints_warnings_and_strict_without_preflight_refuses(tmp_path, capsys, monkeypatch):
    path, warnings = _warned(tmp_path)
    started = []
    monkeypatch.setattr(run_command, "run_mirror", lambda profile, options, run_dir: started.append(options) or 0)
    assert main(["run", "--skip-preflight", "--strict", str(path)]) == 2
    assert started == []
    assert capsys.readouterr().err.splitlines()[1:] == [f"  - {warning}" for warning in warnings]
    assert main(["run", "--skip-preflight", str(path)]) == 0
    assert main(["run", "--strict", str(path)]) == 0  # pre-flight (stubbed here) fails on them: config.weak-settings
    assert [options.strict for options in started] == [False, True]
    assert capsys.readouterr().err.splitlines() == [f"warning: {warning}" for warning in warnings] * 2
