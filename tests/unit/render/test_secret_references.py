"""``render --secrets references`` (render/providers.py): no rendered file holds a secret, over generated profiles;
what a reference cannot carry is refused naming the field and the reference, never the value; ``--strict`` refuses an
explicit ``--secrets values``. Kafka's own readers resolve the references in test_reference_readers.py."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest

from secure_mirror.cli import main
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.render.encoders import UnrepresentableValue
from secure_mirror.render.providers import REFERENCES, Secrets
from tests.support import profiles as pf
from tests.support import seeds
from tests.support.marked_profiles import marked_profile

PROFILES = 200


def _rendered(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): p.read_text(encoding="utf-8") for p in sorted(out.rglob("*")) if p.is_file()}


def test_no_rendered_file_holds_a_secret_over_generated_profiles(tmp_path, monkeypatch, capsys):
    seed = seeds.draw_seed("profiles rendered with secret references")
    rng = random.Random(seed)
    seen_kinds, found, secrets = set(), [], 0
    for index in range(PROFILES):
        case = tmp_path / f"p{index}"
        marked = marked_profile(case, rng, str(index))
        for name, value in marked.env.items():
            monkeypatch.setenv(name, value)
        out = case / "out"
        profile = str(pf.write_profile(case, marked.data))
        assert main(["render", profile, "--out", str(out)]) == 0  # references: render's default
        files = _rendered(out)
        assert "Files holding a secret: none." in files["MANIFEST.md"]
        found += [
            (index, path, name) for path, text in files.items() for name, v in marked.secrets.items() if v in text
        ]
        manifest = json.loads(files["manifest.json"])
        assert manifest["secrets"] == "references"
        assert [e["path"] for e in manifest["files"] if e["secret"]] == ["ccache/"]  # Kerberos caches, made later
        seen_kinds.update(cluster_kind(marked.data[side]) for side in ("source", "target"))
        secrets += len(marked.secrets)
    captured = capsys.readouterr()
    assert found == [], f"seed {seed}: secrets in rendered files: {found[:10]}"
    assert "MARK" not in captured.out + captured.err
    assert seen_kinds >= {"gssapi", "password", "oauth", "mutual-tls", "plaintext"}, seen_kinds
    assert secrets > PROFILES  # the scan looked for secrets of every kind, not for none
    print(f"seed {seed} (repeat with {seeds.ENV}={seed}): {PROFILES} profiles, {secrets} marker secrets, none found")


def cluster_kind(cluster: dict) -> str:
    sasl = cluster.get("sasl")
    if sasl is None:
        return "mutual-tls" if "certificate" in cluster.get("tls", {}) else "plaintext"
    return {"GSSAPI": "gssapi", "OAUTHBEARER": "oauth"}.get(sasl["mechanism"], "password")


def test_with_librdkafka_secrets_only_librdkafka_conf_holds_them(tmp_path, monkeypatch):
    rng = seeds.seeded("librdkafka secrets")
    marked = marked_profile(tmp_path, rng, "l", kinds=("SCRAM-SHA-512", "oauth"))
    for name, value in marked.env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    profile = load_profile(pf.write_profile(tmp_path, marked.data))
    files = render_all(profile, out, secrets=Secrets("references", librdkafka_values=True))
    holding = {f.path for f in files if any(v in f.content for v in marked.secrets.values())}
    assert holding == {"source/librdkafka.conf", "target/librdkafka.conf"}
    assert {f.path for f in files if f.secret} == holding and all(
        (out / p).stat().st_mode & 0o777 == 0o600 for p in holding
    )


def test_librdkafka_conf_says_which_settings_to_add_and_from_where(tmp_path):
    data = pf.profile_data(tmp_path, target=_password_side(tmp_path, "pw"))
    files = {
        f.path: f
        for f in render_all(load_profile(pf.write_profile(tmp_path, data)), tmp_path / "out", secrets=REFERENCES)
    }
    text = files["target/librdkafka.conf"].content
    secret = tmp_path / "target" / "pw.txt"
    assert f"#   sasl.password=<the value of target.sasl.password: file:{secret}>" in text
    assert "\nsasl.password=" not in text and "sasl.username=mirror" in text
    assert "target/jaas.conf" not in files and "source/jaas.conf" in files  # GSSAPI's holds no secret


def _password_side(tmp: Path, value: str, newline: bool = False) -> dict:
    cluster = pf.password(tmp, "target", "SCRAM-SHA-512")
    path = tmp / "target" / "pw.txt"
    path.write_text(value + ("\n" if newline else ""), encoding="utf-8")
    path.chmod(0o600)
    cluster["sasl"]["password"] = f"file:{path}"
    return cluster


@pytest.mark.parametrize(
    ("value", "newline", "says"),
    [
        ('Zq"w9', False, 'the secret contains " or \\, which Kafka pastes unescaped into sasl.jaas.config'),
        ("Zq\\w9", False, 'the secret contains " or \\, which Kafka pastes unescaped into sasl.jaas.config'),
        ("Zqw9", True, "the file ends in a line break, which the profile drops but Kafka's DirectoryConfigProvider"),
    ],
)
def test_what_a_reference_cannot_carry_is_refused_naming_the_reference(tmp_path, capsys, value, newline, says):
    data = pf.profile_data(tmp_path, target=_password_side(tmp_path, value, newline))
    out = tmp_path / "out"
    assert main(["render", str(pf.write_profile(tmp_path, data)), "--out", str(out)]) == 2  # references: the default
    err = capsys.readouterr().err
    assert f"secure-mirror render: target.sasl.password (file:{tmp_path / 'target' / 'pw.txt'}): {says}" in err
    assert value not in err and "Traceback" not in err and not out.exists()
    assert main(["render", str(pf.write_profile(tmp_path, data)), "--out", str(out), "--secrets", "values"]) == 0


def test_an_environment_variable_a_reference_cannot_name_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("MY-PW", "x")
    data = pf.profile_data(tmp_path, target=pf.password(tmp_path, "target", "PLAIN"))
    data["target"]["sasl"]["password"] = "env:MY-PW"
    with pytest.raises(UnrepresentableValue, match=r"target.sasl.password \(env:MY-PW\): a Kafka config provider"):
        render_all(load_profile(pf.write_profile(tmp_path, data)), tmp_path / "out", secrets=REFERENCES)


def test_a_secret_render_cannot_read_is_refused_as_in_values_mode(tmp_path, monkeypatch, capsys):
    """render checks what a reference cannot carry by reading the secret: like every command, it takes a profile only
    when its references resolve where it runs."""
    monkeypatch.delenv("SM_TEST_CLIENT_SECRET", raising=False)
    data = pf.profile_data(tmp_path, target=pf.oauth(tmp_path, "target"))
    profile = str(pf.write_profile(tmp_path, data))
    assert main(["render", profile, "--out", str(tmp_path / "out"), "--secrets", "references"]) == 2
    assert (
        "target.sasl.client_secret: environment variable SM_TEST_CLIENT_SECRET is not set (or empty); export it"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "out").exists()


def test_strict_refuses_an_explicit_values(tmp_path, capsys):
    profile = str(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))
    assert main(["render", profile, "--out", str(tmp_path / "out"), "--secrets", "values", "--strict"]) == 2
    assert "--strict refuses --secrets values" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(["render", profile, "--out", str(tmp_path / "out"), "--strict"]) == 0  # the default, this release


def test_the_allow_list_and_declarations_are_exactly_the_providers_used(tmp_path, monkeypatch):
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", "s")
    data = pf.profile_data(tmp_path, pf.gssapi(tmp_path, "source"), pf.oauth(tmp_path, "target"))
    out = tmp_path / "out"
    render_all(load_profile(pf.write_profile(tmp_path, data)), out, secrets=REFERENCES)
    env = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
    conf = json.loads((out / "spark" / "spark-conf.json").read_text())
    for role in ("driver", "executor"):
        assert f'"-Dorg.apache.kafka.automatic.config.providers={env}"' in conf[f"spark.{role}.extraJavaOptions"]
    source = json.loads((out / "spark" / "source-options.json").read_text())
    sink = json.loads((out / "spark" / "sink-options.json").read_text())
    assert not any(key.startswith("kafka.config.providers") for key in source)  # GSSAPI: a keytab path, no secret
    assert {k: v for k, v in sink.items() if k.startswith("kafka.config.providers")} == {
        "kafka.config.providers": "env",
        "kafka.config.providers.env.class": env,
        "kafka.config.providers.env.param.allowlist.pattern": "SM_TEST_CLIENT_SECRET",
    }
    mm2 = (out / "mm2" / "mm2.properties").read_text()
    assert "\nconfig.providers=env\n" in mm2 and not re.search(r"^\w+\.config\.providers", mm2, re.M)  # top only
    assert os.environ["SM_TEST_CLIENT_SECRET"] == "s"


def test_a_secret_file_whose_path_a_reference_cannot_carry_is_refused(tmp_path):
    folder = tmp_path / "a,b"
    folder.mkdir()
    secret = folder / "pw"
    secret.write_text("x")
    secret.chmod(0o600)
    data = pf.profile_data(tmp_path, target=pf.password(tmp_path, "target", "PLAIN"))
    data["target"]["sasl"]["password"] = f"file:{secret}"
    with pytest.raises(UnrepresentableValue, match=r"target.sasl.password \(file:.*a,b/pw\): the path holds one of"):
        render_all(load_profile(pf.write_profile(tmp_path, data)), tmp_path / "out", secrets=REFERENCES)
