"""Renderers: whole rendered files per mechanism and protocol against golden files, the all-or-nothing tree,
file modes, and that no secret leaks anywhere it should not be."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from secure_mirror.cli import main
from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.profile import load_profile
from secure_mirror.render import acls, krb5, render_all, render_files, spark, templating
from secure_mirror.render.templating import TemplateFailure
from secure_mirror.render.tree import client_files
from tests.support import profiles as pf

REPO = Path(__file__).resolve().parents[3]
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def _case(name: str, tmp: Path, monkeypatch) -> dict:
    monkeypatch.setenv("SM_TEST_CLIENT_SECRET", pf.PASSWORD)
    cases = {
        "gssapi": lambda: pf.profile_data(tmp, pf.gssapi(tmp, "source"), pf.gssapi(tmp, "target", "SASL_PLAINTEXT")),
        "scram": lambda: pf.profile_data(
            tmp,
            pf.password(tmp, "source", "SCRAM-SHA-256", "SASL_PLAINTEXT"),
            pf.password(tmp, "target", "SCRAM-SHA-512"),
        ),
        "plain": lambda: pf.profile_data(tmp, pf.password(tmp, "source", "PLAIN"), pf.password(tmp, "target", "PLAIN")),
        "oauthbearer": lambda: pf.profile_data(tmp, pf.oauth(tmp, "source"), pf.oauth(tmp, "target")),
        "mutual-tls": lambda: pf.profile_data(tmp, pf.mutual_tls(tmp, "source"), pf.mutual_tls(tmp, "target")),
        "plaintext": lambda: pf.profile_data(
            tmp, pf.plaintext(tmp, "source"), pf.plaintext(tmp, "target"), rename={"rule": "identity"}
        ),
        "yarn-cluster": lambda: pf.profile_data(
            tmp,
            rename={"rule": "template", "template": "mirror.{topic}"},
            spark={
                "master": "yarn",
                "deploy_mode": "cluster",
                "conf": {"spark.executor.instances": 2},
                "max_offsets_per_trigger": 10000,
            },
            topics={"include": "orders.*,payments,(eu|us)\\.sales", "exclude": ".*\\.tmp"},
        ),
        "yarn-client-hdfs": lambda: {
            **pf.profile_data(
                tmp,
                spark={"master": "yarn", "deploy_mode": "client"},
                checkpoint_location="hdfs://nn.source.test:8020/user/mirror/checkpoints",
            ),
            "hadoop": {
                "properties": {
                    "core-site.xml": {
                        "fs.defaultFS": "hdfs://nn.source.test:8020",
                        "hadoop.security.authentication": "kerberos",
                    },
                    "hdfs-site.xml": {"dfs.namenode.kerberos.principal": "nn/_HOST@SOURCE.TEST"},
                    "yarn-site.xml": {
                        "yarn.resourcemanager.address": "rm.source.test:8032",
                        "yarn.resourcemanager.principal": "rm/_HOST@SOURCE.TEST",
                    },
                },
                "principal": "mirror/mirror.source.test@SOURCE.TEST",
                "keytab": str(tmp / "source" / "mirror.keytab"),
            },
        },
        "yarn-client-tokens": lambda: _tokens(_case("yarn-client-hdfs", tmp, monkeypatch)),
        "k8s-client": lambda: pf.profile_data(tmp, spark={"master": "k8s://https://k8s.example.com:6443"}),
        "cross-realm": lambda: pf.cross_realm(
            pf.profile_data(tmp, pf.gssapi(tmp, "source"), pf.mutual_tls(tmp, "target"))
        ),
        "ranger": lambda: _ranger(
            pf.profile_data(
                tmp,
                pf.gssapi(tmp, "source"),
                pf.password(tmp, "target", "SCRAM-SHA-512"),
                groups={"include": "app\\..*,billing"},
            )
        ),
    }
    return cases[name]()


def _tokens(data: dict) -> dict:
    """Both sides' executors log in with Kafka delegation tokens (executor_auth: delegation_token)."""
    for side in ("source", "target"):
        data[side]["executor_auth"] = "delegation_token"
    return data


def _ranger(data: dict) -> dict:
    """Apache Ranger policies for both sides (docs/ranger.md): the source's alone, the target's beside its ACLs."""
    data["source"]["acls"] = {"format": "ranger"}
    data["target"]["acls"] = {"format": "both", "ranger_service": "cl1_kafka"}
    return data


CASES = [
    "gssapi",
    "scram",
    "plain",
    "oauthbearer",
    "mutual-tls",
    "plaintext",
    "yarn-cluster",
    "yarn-client-hdfs",
    "yarn-client-tokens",
    "k8s-client",
    "cross-realm",
    "ranger",
]


def _normalise(text: str, tmp: Path) -> str:
    return text.replace(str(tmp), "<TMP>").replace(str(REPO), "<REPO>")


@pytest.mark.parametrize("name", CASES)
def test_rendered_files_match_golden(name, tmp_path, monkeypatch):
    tmp = tmp_path.resolve()
    profile = load_profile(pf.write_profile(tmp, _case(name, tmp, monkeypatch)))
    rendered = {f.path: _normalise(f.content, tmp) for f in render_files(profile, tmp / "out")}
    folder = GOLDEN / name
    if UPDATE:
        for path, content in rendered.items():
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(content, encoding="utf-8")
    expected = {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}
    assert rendered == expected, f"regenerate with UPDATE_GOLDEN=1 pytest {__file__}"


@pytest.mark.parametrize("name", CASES)
def test_client_files_names_what_render_writes_for_a_side_without_rendering(name, tmp_path, monkeypatch):
    """failover's cut-over lists the target's client files from ``client_files``: the names render writes."""
    tmp = tmp_path.resolve()
    profile = load_profile(pf.write_profile(tmp, _case(name, tmp, monkeypatch)))
    rendered = [(f.path, f.purpose) for f in render_files(profile, tmp / "out")]
    for side in ("source", "target"):
        wanted = [f for f in rendered if f[0].startswith(f"{side}/") or f[0] == "krb5.conf"]
        assert sorted(client_files(profile, side)) == sorted(wanted)


# -- the tree -------------------------------------------------------------------------------------------------


def _scram_profile(tmp: Path):
    data = pf.profile_data(tmp, pf.gssapi(tmp, "source"), pf.password(tmp, "target", "SCRAM-SHA-512"))
    return load_profile(pf.write_profile(tmp, data))


def test_secret_files_are_created_0600_and_others_readable(tmp_path, monkeypatch):
    profile = _scram_profile(tmp_path)
    chmodded = []
    real_chmod = os.chmod
    monkeypatch.setattr(
        os, "chmod", lambda path, mode, **kw: (chmodded.append(Path(path)), real_chmod(path, mode, **kw))
    )
    files = render_all(profile, tmp_path / "out")
    modes = {f.path: stat.S_IMODE((tmp_path / "out" / f.path).stat().st_mode) for f in files}
    assert {path for path, mode in modes.items() if mode == 0o600} == {
        "target/jaas.conf",
        "target/client.properties",
        "target/librdkafka.conf",
        "spark/sink-options.json",
        "mm2/mm2.properties",
    }
    assert modes["spark/spark-submit.sh"] & 0o100 and modes["acls/apply-acls.sh"] & 0o100
    assert stat.S_IMODE((tmp_path / "out" / "ccache").stat().st_mode) == 0o700
    assert all(path.suffix == ".tmp" for path in chmodded)  # only the staging folder, never a file after writing


def test_no_secret_outside_0600_files_errors_or_logs(tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    data = pf.profile_data(tmp_path, pf.gssapi(tmp_path, "source"), pf.password(tmp_path, "target", "SCRAM-SHA-512"))
    data["target"]["sasl"]["kafka_principal"] = "bad principal"
    profile_path = pf.write_profile(tmp_path, data)
    assert main(["render", str(profile_path), "--out", str(tmp_path / "bad")]) == 2  # an error after reading it
    del data["target"]["sasl"]["kafka_principal"]
    out = ["--out", str(tmp_path / "out"), "--secrets", "values"]  # its " and \\: no reference can carry them
    assert main(["render", str(pf.write_profile(tmp_path, data)), *out]) == 0
    captured = capsys.readouterr()
    escaped_forms = {pf.PASSWORD, json.dumps(pf.PASSWORD)[1:-1], pf.PASSWORD.replace("\\", "\\\\")}
    for form in escaped_forms:
        assert form not in captured.out + captured.err + caplog.text
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file() and stat.S_IMODE(path.stat().st_mode) != 0o600:
            text = path.read_text(encoding="utf-8")
            assert not any(form in text for form in escaped_forms), path


def test_secret_is_in_the_0600_files_in_each_format(tmp_path):
    render_all(_scram_profile(tmp_path), tmp_path / "out")
    out = tmp_path / "out"
    assert json.loads((out / "spark" / "sink-options.json").read_text())["kafka.sasl.jaas.config"].endswith(
        'password="p\\"a\\\\ss;w=rd é";'
    )
    assert "sasl.password=" + pf.PASSWORD in (out / "target" / "librdkafka.conf").read_text()


def test_refuses_non_empty_out_unless_forced(tmp_path):
    profile = _scram_profile(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(BadInputError, match="exists and is not empty; choose another --out or pass --force"):
        render_all(profile, out)
    assert (out / "keep.txt").exists()
    render_all(profile, out, force=True)
    assert not (out / "keep.txt").exists() and (out / "manifest.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


def test_an_out_below_a_file_is_bad_input_naming_it(tmp_path):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(BadInputError) as caught:
        render_all(_scram_profile(tmp_path), tmp_path / "a-file" / "out")
    assert str(caught.value) == (
        f"--out {tmp_path / 'a-file' / 'out'} cannot be created ({tmp_path / 'a-file'} is not a folder); "
        "choose another folder"
    )


def test_empty_out_dir_is_fine(tmp_path):
    (tmp_path / "out").mkdir()
    render_all(_scram_profile(tmp_path), tmp_path / "out")
    assert (tmp_path / "out" / "source" / "client.properties").exists()


def test_a_failure_while_writing_leaves_nothing(tmp_path, monkeypatch):
    profile = _scram_profile(tmp_path)
    calls = []
    real_open = os.open

    def failing_open(path, flags, mode=0o777, *args, **kwargs):
        calls.append(path)
        if len(calls) == 5:
            raise OSError(28, "No space left on device")
        return real_open(path, flags, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", failing_open)
    with pytest.raises(EnvironmentNotReady) as caught:
        render_all(profile, tmp_path / "out")
    assert (
        str(caught.value)
        == f"--out {tmp_path / 'out'}: the rendered files could not be written (No space left on device)"
    )
    assert [p.name for p in tmp_path.iterdir() if "out" in p.name] == []


def test_bad_profile_renders_nothing(tmp_path, capsys):
    data = pf.profile_data(tmp_path)
    Path(data["source"]["sasl"]["keytab"]).unlink()
    assert main(["render", str(pf.write_profile(tmp_path, data)), "--out", str(tmp_path / "out")]) == 2
    assert "source.sasl.keytab: file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_manifest_lists_every_file(tmp_path):
    files = render_all(_scram_profile(tmp_path), tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    listed = {entry["path"] for entry in manifest["files"]}
    on_disk = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert on_disk <= listed and "ccache/" in listed and len(files) == len(on_disk)
    assert "| target/client.properties | 0600 | yes |" in (tmp_path / "out" / "MANIFEST.md").read_text()


# -- templates ------------------------------------------------------------------------------------------------


def test_template_errors_name_template_and_line_but_not_values():
    with pytest.raises(TemplateFailure) as caught:
        templating.render("templates/krb5.conf.j2", realms={"R": {"kdcs": ["hunter2-secret"]}})
    assert str(caught.value) == "template templates/krb5.conf.j2 line 5: 'default_realm' is undefined"


def test_templates_found_from_the_package():
    assert (templating.data_dir("templates") / "krb5.conf.j2").is_file()
    assert (templating.data_dir("jaas") / "gssapi.j2").is_file()


def test_krb5_written_into_a_folder_is_the_declared_realms_or_the_profiles_own_file(tmp_path):
    declared = pf.load(tmp_path)
    (folder := tmp_path / "declared").mkdir()
    assert krb5.write_into(declared, folder) == str(folder / "krb5.conf")
    assert (folder / "krb5.conf").read_text(encoding="utf-8") == krb5.krb5_conf(declared)
    data = pf.profile_data(tmp_path)
    (own := tmp_path / "own-krb5.conf").write_text("[libdefaults]\n")
    data["kerberos"] = {"krb5_conf": str(own)}
    (folder := tmp_path / "own").mkdir()
    assert krb5.write_into(load_profile(pf.write_profile(tmp_path, data)), folder) == str(own)
    assert list(folder.iterdir()) == []


# -- spark and acls -------------------------------------------------------------------------------------------


def test_two_identities_in_one_jvm(tmp_path):
    profile = load_profile(pf.write_profile(tmp_path, pf.profile_data(tmp_path)))
    source, sink = spark.source_options(profile), spark.sink_options(profile)
    assert 'principal="mirror/mirror.source.test@SOURCE.TEST"' in source["kafka.sasl.jaas.config"]
    assert 'principal="mirror/mirror.target.test@TARGET.TEST"' in sink["kafka.sasl.jaas.config"]
    assert str(tmp_path / "source" / "mirror.keytab") in source["kafka.sasl.jaas.config"]


def test_continuous_trigger_waits_10_ms_for_source_fetches_unless_the_profile_says(tmp_path):
    data = pf.profile_data(tmp_path)
    data["mirror"]["spark"] = {"trigger": "continuous"}
    continuous = load_profile(pf.write_profile(tmp_path, data))
    assert spark.source_options(continuous)["kafka.fetch.max.wait.ms"] == "10"
    data["source"]["client_options"] = {"fetch.max.wait.ms": 100}
    assert spark.source_options(load_profile(pf.write_profile(tmp_path, data)))["kafka.fetch.max.wait.ms"] == "100"
    data["mirror"]["spark"] = {}
    data["source"]["client_options"] = {}
    assert "kafka.fetch.max.wait.ms" not in spark.source_options(load_profile(pf.write_profile(tmp_path, data)))


def test_the_mirrors_source_reads_under_either_trigger_unless_the_profile_asks_for_sparks(tmp_path):
    data = pf.profile_data(tmp_path)
    for trigger in ("micro_batch", "continuous"):
        data["mirror"]["spark"] = {"trigger": trigger}
        assert spark.source_format(load_profile(pf.write_profile(tmp_path, data))) == spark.SOURCE_FORMAT
        data["mirror"]["spark"] = {"trigger": trigger, "source": "kafka"}
        assert spark.source_format(load_profile(pf.write_profile(tmp_path, data))) == "kafka"


def test_cluster_mode_ships_keytabs_under_distinct_names(tmp_path, monkeypatch):
    profile = load_profile(pf.write_profile(tmp_path, _case("yarn-cluster", tmp_path, monkeypatch)))
    assert 'keyTab="source-mirror.keytab"' in spark.source_options(profile)["kafka.sasl.jaas.config"]
    assert 'keyTab="target-mirror.keytab"' in spark.sink_options(profile)["kafka.sasl.jaas.config"]
    shipped = spark.shipped_files(profile, tmp_path / "out")
    assert shipped["source-mirror.keytab"] == str(tmp_path / "source" / "mirror.keytab")
    assert shipped["target-mirror.keytab"] == str(tmp_path / "target" / "mirror.keytab")


def test_acls_for_regex_and_template(tmp_path, monkeypatch):
    profile = load_profile(pf.write_profile(tmp_path, _case("yarn-cluster", tmp_path, monkeypatch)))
    source, target = acls.source_acls(profile), acls.target_acls(profile)
    assert [u.pattern for u in source.unresolved] == [u.pattern for u in target.unresolved] == ["(eu|us)\\.sales"]
    topics = [b for b in target.bindings if b.resource_type == "TOPIC" and b.resource_name not in target.own_topics]
    assert {(b.resource_name, b.pattern_type) for b in topics} == {
        ("mirror.orders", "PREFIXED"),
        ("mirror.payments", "LITERAL"),
    }
    # READ: for verify; ALTER_CONFIGS and ALTER: mirror.topic_shape's config sync and partition growth (default on)
    assert {b.operation for b in topics} == {"WRITE", "DESCRIBE", "CREATE", "READ", "ALTER_CONFIGS", "ALTER"}
    groups = [(b.resource_name, b.pattern_type, b.operation) for b in target.bindings if b.resource_type == "GROUP"]
    assert groups == [("secure-mirror-src-tgt-", "PREFIXED", "READ")]


def test_mirrormaker2_acls_are_separate_and_name_its_internal_topics_and_group(tmp_path, monkeypatch):
    profile = load_profile(pf.write_profile(tmp_path, _case("scram", tmp_path, monkeypatch)))
    job = {
        (b.operation, b.resource_type, b.resource_name)
        for plan in (acls.source_acls(profile), acls.target_acls(profile))
        for b in plan.bindings
    }
    source, target = acls.mm2_source_acls(profile), acls.mm2_target_acls(profile)
    src, tgt = profile.source.alias, profile.target.alias
    mm2 = {(b.operation, b.resource_type, b.resource_name) for b in source.bindings + target.bindings}
    internal = {name for op, kind, name in mm2 if kind == "TOPIC" and ("internal" in name or name == "heartbeats")}
    assert internal == {
        f"mm2-offset-syncs.{tgt}.internal",
        f"{src}.checkpoints.internal",
        "heartbeats",
        f"mm2-configs.{src}.internal",
        f"mm2-offsets.{src}.internal",
        f"mm2-status.{src}.internal",
    }
    assert {b.resource_name for b in source.bindings if "internal" in b.resource_name} == {
        f"mm2-offset-syncs.{tgt}.internal"
    }  # offset-syncs live on the source by default
    assert ("READ", "GROUP", f"{src}-mm2") in mm2
    # the Spark job's identity gets none of MM2's topics but the heartbeats it writes too (docs/heartbeats.md)
    assert {name for _, _, name in job} & internal == {"heartbeats"}
    # configs: only mirror.topic_shape's, on the mirrored topics (DESCRIBE_CONFIGS source, ALTER_CONFIGS target)
    configs = {(op, name) for op, kind, name in job if op in ("ALTER_CONFIGS", "DESCRIBE_CONFIGS")}
    assert {op for op, _ in configs} == {"ALTER_CONFIGS", "DESCRIBE_CONFIGS"}
    assert not {name for _, name in configs} & internal


def test_mutual_tls_principal_is_the_certificate_subject(tmp_path, monkeypatch):
    profile = load_profile(pf.write_profile(tmp_path, _case("mutual-tls", tmp_path, monkeypatch)))
    assert profile.source.kafka_principal == "User:CN=mirror,O=Example"


@pytest.mark.parametrize(
    "master, deploy_mode",
    [
        ("local[2]", "client"),
        ("spark://spark.example.com:7077", "client"),
        ("spark://spark.example.com:7077", "cluster"),
    ],
)
def test_one_keytab_for_both_sides_ships_under_both_names_in_every_deploy_mode(master, deploy_mode, tmp_path):
    """The rendered spark-submit.sh is run by bash with a stand-in spark-submit: every keyTab the Kafka options
    name is a file that ships (or, with a local master, is the keytab itself), holding the keytab's bytes."""
    import re
    import subprocess

    data = pf.profile_data(tmp_path, spark={"master": master, "deploy_mode": deploy_mode})
    data["target"]["sasl"]["keytab"] = data["source"]["sasl"]["keytab"]
    out = tmp_path / "out"
    render_all(load_profile(pf.write_profile(tmp_path, data)), out)
    stub = tmp_path / "spark-submit"
    stub.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$ARGS_FILE"\n')
    stub.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "SPARK_SUBMIT": str(stub), "ARGS_FILE": str(tmp_path / "args")}
    subprocess.run(["bash", str(out / "spark" / "spark-submit.sh")], env=env, check=True, timeout=60)
    args = (tmp_path / "args").read_text().splitlines()
    shipped = args[args.index("--files") + 1].split(",") if "--files" in args else []
    keytab = Path(data["source"]["sasl"]["keytab"]).read_bytes()
    for options in ("source-options.json", "sink-options.json"):
        jaas = json.loads((out / "spark" / options).read_text())["kafka.sasl.jaas.config"]
        name = re.search(r'keyTab="([^"]+)"', jaas).group(1)
        if master.startswith("local"):
            assert name == data["source"]["sasl"]["keytab"]
            continue
        files = {Path(f).name: Path(f) for f in shipped}
        assert name in files, (options, name, shipped)
        assert files[name].read_bytes() == keytab
