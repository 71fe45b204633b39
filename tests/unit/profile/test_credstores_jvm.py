"""Real Hadoop credential stores, made by Hadoop's own ``hadoop credential create`` (its CredentialShell, the value
answered to its prompt through a pipe: sandbox/credstore.py), read back through ``SecretRef``
(jvm/tools/CredentialRead.java over Hadoop's CredentialProviderFactory) and through Kafka's own config classes with our
config provider (jvm/sink securemirror.config.HadoopCredentialConfigProvider), on the job's kafka-clients and on
Kafka 4's."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.profile import SecretRef, credstore_reader
from secure_mirror.profile.secrets import SecretUnavailable
from secure_mirror.sandbox import credstore
from secure_mirror.sandbox.sink_jar import SOURCES
from tests.support.sink_jar import run_check

pytestmark = [
    pytest.mark.jvm,
    pytest.mark.skipif(shutil.which(paths.java_executable()) is None, reason="java is missing"),
]
CHECK = paths.REPO_ROOT / "tests" / "support" / "CredentialProviderCheck.java"
PROVIDER = SOURCES / "config" / "HadoopCredentialConfigProvider.java"
TRUSTSTORE = "Marker-truststore:}{#é ${x}"  # Kafka's and Hadoop's own separators, a non-ASCII letter
SASL = "Marker-sasl-password"  # goes into a JAAS line: no quote, no backslash
STORE_PASSWORD = "Marker-store-password"
MARKERS = ("Marker-truststore", SASL, STORE_PASSWORD)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, str]:
    """``open``: Hadoop's default keystore password, two aliases; ``locked``: one alias, its own keystore password."""
    folder = tmp_path_factory.mktemp("stores")
    made = {"open": f"jceks://file{folder}/mirror.jceks", "locked": f"localjceks://file{folder}/locked.jceks"}
    credstore.create(made["open"], "source-truststore", TRUSTSTORE)
    credstore.create(made["open"], "target-sasl", SASL)
    credstore.create(made["locked"], "target-sasl", SASL, STORE_PASSWORD)
    return made


@pytest.fixture(autouse=True)
def _hadoops_environment(monkeypatch):
    for name in ("HADOOP_CREDSTORE_PASSWORD", "HADOOP_CONF_DIR", "KRB5CCNAME", "KRB5_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    credstore_reader.forget()
    yield
    credstore_reader.forget()


def refused(reference: str) -> str:
    with pytest.raises(SecretUnavailable) as caught:
        SecretRef.parse(reference).resolve()
    message = str(caught.value)
    assert not any(marker in message for marker in MARKERS), message
    return message


def test_a_reference_reads_the_alias_hadoop_stored(stores, monkeypatch):
    started: list[tuple[list[str], dict[str, str]]] = []
    run = subprocess.run

    def watched(argv, **kw):  # the reader's JVMs (not javac, which compiles the tool on a fresh machine)
        if "CredentialRead" in argv:  # the main class, alone
            started.append((argv, kw["env"]))
        return run(argv, **kw)

    monkeypatch.setattr(credstore_reader.subprocess, "run", watched)
    assert SecretRef.parse(f"{stores['open']}#source-truststore").resolve() == TRUSTSTORE
    assert [argv[-2:] for argv, _env in started] == [[stores["open"], "source-truststore"]]
    assert not any(marker in " ".join(argv) + repr(env) for argv, env in started for marker in MARKERS)
    assert SecretRef.parse(f"{stores['open']}#TARGET-SASL").resolve() == SASL  # JCEKS aliases know no case
    assert refused(f"{stores['open']}#target-truststore") == (
        f"{stores['open']}#target-truststore: the credential store {stores['open']} has no alias target-truststore "
        f"(it holds 2); add it with `hadoop credential create target-truststore -provider {stores['open']}`, or fix "
        "the alias"
    )


def test_a_store_with_its_own_password_opens_with_hadoops_variable(stores, monkeypatch):
    reference = f"{stores['locked']}#target-sasl"
    assert refused(reference) == (
        f"{reference}: the credential store {stores['locked']} did not open with its keystore password "
        "(HADOOP_CREDSTORE_PASSWORD is not set; Hadoop's default is 'none'): IOException: Keystore was tampered with, "
        "or password was incorrect (UnrecoverableKeyException: Password verification failed); set "
        "HADOOP_CREDSTORE_PASSWORD to the store's password"
    )
    monkeypatch.setenv("HADOOP_CREDSTORE_PASSWORD", STORE_PASSWORD)
    assert SecretRef.parse(reference).resolve() == SASL


def test_a_store_with_its_own_password_opens_with_the_password_file_core_site_names(stores, tmp_path, monkeypatch):
    (tmp_path / "core-site.xml").write_text(
        "<configuration><property><name>hadoop.security.credstore.java-keystore-provider.password-file</name>"
        "<value>mirror-store.password</value></property></configuration>\n"
    )
    (tmp_path / "mirror-store.password").write_text(STORE_PASSWORD + "\n")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))  # its folder goes on the class path, as Hadoop's CLI does
    assert SecretRef.parse(f"{stores['locked']}#target-sasl").resolve() == SASL


def test_kafkas_config_classes_resolve_the_alias_through_our_provider(stores, tmp_path):
    """AdminClientConfig on the job's kafka-clients, then on Kafka 4's with its allow-list of providers naming ours."""
    store = stores["open"]
    args = (store, "source-truststore", "target-sasl", "target-truststore")
    job = run_check(tmp_path, CHECK, [PROVIDER], "securemirror.config.CredentialProviderCheck", *args)
    jars = Path(paths.pyspark_jars_dir() or "")
    hadoop = ":".join(str(jar) for jar in sorted(jars.glob("hadoop-client-*.jar")))
    kafka4 = subprocess.run(
        [paths.java_executable(),
         "-Dorg.apache.kafka.automatic.config.providers=securemirror.config.HadoopCredentialConfigProvider",
         "-cp", f"{tmp_path}:{hadoop}:{paths.kafka_classpath()}", "securemirror.config.CredentialProviderCheck", *args],
        capture_output=True, text=True, timeout=300, env={"PATH": os.environ["PATH"]},
    )  # fmt: skip
    assert kafka4.returncode == 0, kafka4.stderr[-4000:]
    for lines in (job, kafka4.stdout.splitlines()):
        answers = dict(line.split("\t", 1) for line in lines)
        assert base64.b64decode(answers["truststore"]).decode() == TRUSTSTORE
        assert base64.b64decode(answers["jaas"]).decode() == (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required username="mirror" password="{SASL}";'
        )
        assert answers["missing"] == (
            f"the credential store {store} has no alias target-truststore; add it with `hadoop credential create "
            f"target-truststore -provider {store}`, or fix the alias"
        )
