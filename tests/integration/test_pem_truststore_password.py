"""Issue 25: a PEM CA with ``truststore_password`` is refused at validate, because every Java client refuses it.

Before the rule, render wrote ``ssl.truststore.password`` beside ``ssl.truststore.type=PEM`` into client.properties,
mm2.properties and the sink options. Here the real reader decides: Kafka's Java client (KafkaProducer and Admin,
``jvm/tools/ClientStart.java``) is constructed on what the renderer writes for such a cluster, and refuses to start;
pre-flight's own Java step (``preflight/checks/connection.java_client_checks``: ``jvm/tools/JavaClientProbe.java``,
then the judgement) fails its ``java.client`` check on it, never passes it. validate refuses the profile with the
field named and no secret shown.
"""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest

from secure_mirror import paths
from secure_mirror.cli import main
from secure_mirror.preflight.checks import connection
from secure_mirror.preflight.model import FAIL
from secure_mirror.profile import ProfileError, load_profile
from secure_mirror.profile.models import Profile
from secure_mirror.profile.secrets import SecretRef
from secure_mirror.render import java_properties, render_all
from tests.support import profiles as pf

pytestmark = pytest.mark.jvm
REPO = Path(__file__).resolve().parents[2]
STORE_PASSWORD = "pem-store-pw-7"
REFUSAL = "SSL trust store password cannot be specified for PEM format"  # Kafka's DefaultSslEngineFactory
PROBLEM = (
    "source.tls.truststore_password: a PEM CA file has no password, and Kafka's Java clients refuse to start "
    "with one; remove it"
)


def _pem_ca(folder: Path) -> str:
    """A real self-signed CA certificate (PEM), so the only thing wrong below is the password."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pem-ca")])
    start = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    ca = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return str(folder / "ca.pem")


def _data(tmp: Path) -> dict:
    source = {
        "alias": "src",
        "bootstrap_servers": ["127.0.0.1:1"],  # unreachable on purpose: constructing the client is what counts
        "security_protocol": "SSL",
        "tls": {"ca": _pem_ca(tmp / "certs")},
    }
    return pf.profile_data(tmp, source=source)


def _with_password(profile: Profile, password: str) -> Profile:
    """The validated profile with the password added behind validation's back (model_copy does not validate):
    what render and pre-flight would have been given before the rule."""
    assert profile.source.tls is not None
    tls = profile.source.tls.model_copy(update={"truststore_password": SecretRef("file", password)})
    return profile.model_copy(update={"source": profile.source.model_copy(update={"tls": tls})})


def _client_start(*files: Path) -> list[list[str]]:
    done = subprocess.run(
        [
            paths.java_executable(),
            "-Xmx256m",
            "-cp",
            paths.kafka_classpath(),
            str(REPO / "jvm/tools/ClientStart.java"),
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.split("\t") for line in done.stdout.splitlines()]


def test_the_java_client_refuses_a_pem_truststore_password_and_so_does_validate(tmp_path, capsys):
    data = _data(tmp_path)
    profile = load_profile(pf.write_profile(tmp_path, data))
    render_all(profile, tmp_path / "out")
    password_file = pf.secret_file(tmp_path / "store.pw", STORE_PASSWORD).removeprefix("file:")
    unchecked = _with_password(profile, password_file)
    settings = java_properties.client_properties(unchecked.source, "source")
    assert settings["ssl.truststore.type"] == "PEM" and settings["ssl.truststore.password"] == STORE_PASSWORD
    with_password = tmp_path / "with-password.properties"
    with_password.write_text(java_properties.properties_text(settings, []), encoding="utf-8")

    rendered, refused = _client_start(tmp_path / "out" / "source" / "client.properties", with_password)
    assert rendered[0] == "OK", rendered  # the same cluster without the password starts
    assert refused[0] == "REFUSED" and REFUSAL in refused[-1], refused

    [check] = connection.java_client_checks(unchecked, ["source"], None, 2.0, ("source",))  # as runner
    assert check.id == "source.java.client" and check.status == FAIL and REFUSAL in check.finding, check
    assert STORE_PASSWORD not in check.finding + check.fix

    data["source"]["tls"]["truststore_password"] = f"file:{password_file}"
    with pytest.raises(ProfileError) as caught:
        load_profile(pf.write_profile(tmp_path, data))
    assert caught.value.problems == [PROBLEM]
    assert main(["validate", str(pf.write_profile(tmp_path, data))]) == 2
    err = capsys.readouterr().err
    assert PROBLEM in err and STORE_PASSWORD not in err and "Traceback" not in err
