"""Issue 11 part 5: validate refuses what a real client refuses at start.

Every TLS/SASL combination the profile schema allows (security protocols x mechanisms x TLS variants: PEM,
PKCS12 and JKS truststores, mutual TLS with RSA, EC and Ed25519 keys, an encrypted key with its password) is
rendered, then the real clients are constructed on the rendered files: Kafka's Java KafkaProducer and Admin
(one JVM for all, ``jvm/tools/ClientStart.java``) on client.properties, and librdkafka (confluent-kafka's
Producer) on librdkafka.conf. Constructing is what counts: the brokers are unreachable on purpose, and a login
module that runs (GSSAPI without a KDC, OAuth without a token endpoint) means the configuration was accepted.
Each combination must either start in both clients, or be refused by validate with one sentence naming the
field (``secure_mirror.profile.compat``).
"""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.errors import BadInputError
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from tests.support import profiles as pf

# CI time: the module is slow (1d870a0's CI overran 90 min); docs/testing.md#what-ci-leaves-to-slow says what CI keeps.
pytestmark = [pytest.mark.jvm, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
STORE_PASSWORD = "store-pw-1"
KEY_PASSWORD = "key-pw-1"


def _certificates(folder: Path) -> dict[str, str]:
    """A CA (PEM, and as PKCS12/JKS truststores made by keytool) and client certificates with RSA, EC and
    Ed25519 keys, plus an RSA key encrypted with KEY_PASSWORD (PKCS#8, PBES2)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    out = {"ca.pem": folder / "ca.pem"}
    out["ca.pem"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    for kind, suffix in (("PKCS12", "p12"), ("JKS", "jks")):
        out[f"ca.{suffix}"] = folder / f"ca.{suffix}"
        subprocess.run(
            [
                "keytool",
                "-importcert",
                "-noprompt",
                "-alias",
                "ca",
                "-file",
                str(out["ca.pem"]),
                "-keystore",
                str(out[f"ca.{suffix}"]),
                "-storetype",
                kind,
                "-storepass",
                STORE_PASSWORD,
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
    keys = {
        "rsa": rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "ec": ec.generate_private_key(ec.SECP256R1()),
        "ed25519": ed25519.Ed25519PrivateKey.generate(),
    }
    for name, key in keys.items():
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"mirror-{name}")])
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(2)
            .not_valid_before(start)
            .not_valid_after(start + datetime.timedelta(days=3650))
            .sign(ca_key, hashes.SHA256())
        )
        (folder / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (folder / f"{name}.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        (folder / f"{name}.key").chmod(0o600)
        out[name] = folder / name
    (folder / "rsa-enc.pem").write_bytes((folder / "rsa.pem").read_bytes())
    (folder / "rsa-enc.key").write_bytes(
        keys["rsa"].private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(KEY_PASSWORD.encode()),
        )
    )
    (folder / "rsa-enc.key").chmod(0o600)
    (folder / "rsa-pbes1.pem").write_bytes((folder / "rsa.pem").read_bytes())
    subprocess.run(
        [
            "openssl",
            "pkcs8",
            "-topk8",
            "-v1",
            "PBE-SHA1-3DES",
            "-in",
            str(folder / "rsa.key"),
            "-out",
            str(folder / "rsa-pbes1.key"),
            "-passout",
            f"pass:{KEY_PASSWORD}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return {k: str(v) for k, v in out.items()}


def _tls_variants(material: dict[str, str], tmp: Path) -> dict[str, dict]:
    store_pw = pf.secret_file(tmp / "store.pw", STORE_PASSWORD)
    key_pw = pf.secret_file(tmp / "key.pw", KEY_PASSWORD)
    base = tmp / "certs"
    variants = {
        "pem": {"ca": material["ca.pem"]},
        "pkcs12": {"ca": material["ca.p12"], "truststore_password": store_pw},
        "jks": {"ca": material["ca.jks"], "truststore_password": store_pw},
        "no-hostname-check": {"ca": material["ca.pem"], "hostname_verification": False},
    }
    for key in ("rsa", "ec", "ed25519"):
        variants[f"mutual-{key}"] = {
            "ca": material["ca.pem"],
            "certificate": str(base / f"{key}.pem"),
            "key": str(base / f"{key}.key"),
        }
    variants["mutual-rsa-encrypted"] = {
        "ca": material["ca.pem"],
        "certificate": str(base / "rsa-enc.pem"),
        "key": str(base / "rsa-enc.key"),
        "key_password": key_pw,
    }
    variants["mutual-rsa-pbes1"] = {
        "ca": material["ca.pem"],
        "certificate": str(base / "rsa-pbes1.pem"),
        "key": str(base / "rsa-pbes1.key"),
        "key_password": key_pw,
    }
    variants["mutual-rsa-pkcs12-truststore"] = {
        **variants["mutual-rsa"],
        "ca": material["ca.p12"],
        "truststore_password": store_pw,
    }
    return variants


def _sasl(tmp: Path, mechanism: str) -> dict | None:
    if mechanism == "none":
        return None
    if mechanism == "GSSAPI":
        return pf.gssapi(tmp, "source")["sasl"]
    if mechanism == "OAUTHBEARER":
        sasl = pf.oauth(tmp, "source")["sasl"]
        sasl["client_secret"] = pf.secret_file(tmp / "client.secret", "oauth-secret")
        return sasl
    return {"mechanism": mechanism, "username": "mirror", "password": pf.secret_file(tmp / "sasl.pw", "sasl-pw")}


MECHANISMS = ("GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


def combinations(tmp: Path) -> dict[str, dict]:
    """Name -> source cluster dict, for every protocol x mechanism x TLS variant."""
    variants = _tls_variants(_certificates(tmp / "certs"), tmp)
    clusters: dict[str, dict] = {"PLAINTEXT": {"security_protocol": "PLAINTEXT"}}
    for mechanism in MECHANISMS:
        clusters[f"SASL_PLAINTEXT/{mechanism}"] = {"security_protocol": "SASL_PLAINTEXT", "sasl": _sasl(tmp, mechanism)}
    for name, tls in variants.items():
        clusters[f"SSL/{name}"] = {"security_protocol": "SSL", "tls": tls}
        for mechanism in MECHANISMS:
            clusters[f"SASL_SSL/{mechanism}/{name}"] = {
                "security_protocol": "SASL_SSL",
                "sasl": _sasl(tmp, mechanism),
                "tls": tls,
            }
    return {
        name: {"alias": "src", "bootstrap_servers": ["127.0.0.1:1"], **cluster} for name, cluster in clusters.items()
    }


# Kafka 4.x's Java client refuses every token endpoint unless the JVM runs with this system property: the rendered
# Spark options set it (render/spark.py), so the JVM here does too. Left open (issue 11): mm2.properties' header
# and client.properties do not tell MirrorMaker 2 or Kafka's tools to set it (KAFKA_OPTS).
OAUTH_URLS = "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=https://idp.example.com/oauth2/token"
# Refusals validate cannot fix: the librdkafka that scripts/setup builds has no libcurl, hence no OIDC.
KNOWN: tuple[str, ...] = ()  # refusals accepted as known gaps (none since setup builds librdkafka with libcurl)


def _librdkafka_start(conf_file: Path) -> str | None:
    """None when confluent-kafka's Producer is constructed from the rendered file, else its message."""
    from confluent_kafka import KafkaException, Producer

    conf = {}
    for line in conf_file.read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            conf[key] = value.replace("\\=", "=").replace("\\:", ":")
    conf.pop("sasl.kerberos.kinit.cmd", None)  # kinit needs the KDC: a login, not the configuration
    try:
        Producer({**conf, "log_level": 0}).flush(0)
    except (KafkaException, ValueError, TypeError) as exc:
        return str(exc)
    return None


def test_every_combination_starts_in_both_clients_or_validate_refuses_it(tmp_path):
    rendered: dict[str, Path] = {}
    refused_by_validate: dict[str, str] = {}
    for name, cluster in combinations(tmp_path).items():
        folder = tmp_path / "p" / name.replace("/", "_")
        folder.mkdir(parents=True)
        data = pf.profile_data(folder, source=cluster)
        try:
            render_all(load_profile(pf.write_profile(folder, data)), folder / "out")
        except BadInputError as exc:
            refused_by_validate[name] = str(exc)
            continue
        rendered[name] = folder / "out"
    java = subprocess.run(
        [
            paths.java_executable(),
            "-Xmx256m",
            OAUTH_URLS,
            f"-Djava.security.krb5.conf={next(iter(rendered.values())) / 'krb5.conf'}",
            "-cp",
            paths.kafka_classpath(),
            str(REPO / "jvm/tools/ClientStart.java"),
            *(str(out / "source" / "client.properties") for out in rendered.values()),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert java.returncode == 0, java.stderr[-2000:]
    java_result = dict(zip(rendered, java.stdout.splitlines()))
    print(
        "Java:",
        {
            status: sum(line.startswith(status) for line in java_result.values())
            for status in ("OK", "LOGIN", "REFUSED")
        },
    )
    problems, known = [], []
    for name, out in rendered.items():
        status, *rest = java_result[name].split("\t")
        if status == "REFUSED":
            problems.append(f"{name}: the Java client refuses it: {rest[-1]}")
        if (message := _librdkafka_start(out / "source" / "librdkafka.conf")) is not None:
            problems.append(f"{name}: librdkafka refuses it: {message}")
    print(f"{len(rendered) + len(refused_by_validate)} combinations; validate refused {len(refused_by_validate)}:")
    for name, why in sorted(refused_by_validate.items()):
        print(f"  {name}: {why}")
    for problem in problems:
        if any(reason in problem for reason in KNOWN):
            known.append(problem)
    assert not [p for p in problems if p not in known], "\n".join(p for p in problems if p not in known)
    if known:
        pytest.xfail(f"{len(known)} known refusals (see KNOWN): " + known[0])
