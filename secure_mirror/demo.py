"""The demo: sandbox up, a few topics with data, render, grant the rendered ACLs, pre-flight, mirror until
caught up, lag, verify, and a summary with where every file lives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from secure_mirror.errors import EXIT_FAILED, EXIT_OK
from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import render_table, run_preflight
from secure_mirror.preflight.admin_identity import admin_clusters
from secure_mirror.profile import load_profile
from secure_mirror.render import render_all
from secure_mirror.render.providers import REFERENCES
from secure_mirror.run.lag import format_table, lag
from secure_mirror.run.launcher import run_mirror
from secure_mirror.sandbox import Sandbox
from secure_mirror.verify import verify

DEMO_TOPICS = {"demo.orders": 3, "demo.payments": 2}


def step(text: str) -> None:
    print(f"==> {text}", flush=True)


def demo_records(topic: str, count: int) -> list[dict]:
    """Keys, headers and a few null values, as real topics have them."""
    return [
        {
            "key": f"{topic}-{i}".encode(),
            "value": None if i % 97 == 0 else f"record {i} of {topic}".encode(),
            "headers": [("source", b"demo"), ("seq", str(i).encode())],
        }
        for i in range(count)
    ]


def start_sandbox(base: Path) -> Sandbox:
    if (base / "sandbox" / "state.json").exists():
        Sandbox.load(base / "sandbox").down()
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True, mode=0o700)
    return Sandbox.up(base / "sandbox")


def load_data(sb: Sandbox, records: int) -> None:
    sb.admin("source", admin_ops.create_topics, DEMO_TOPICS)
    for topic in DEMO_TOPICS:
        sb.admin("source", admin_ops.produce, topic, demo_records(topic, records))


def grant_rendered_acls(sb: Sandbox, out: Path) -> int:
    granted = 0
    for side in ("source", "target"):
        acls = json.loads((out / "acls" / f"{side}.acls.json").read_text())
        sb.admin(side, admin_ops.create_acls, acls)
        granted += len(acls)
    return granted


def run_demo(base: Path, *, records: int, keep_sandbox: bool) -> int:
    base = base.resolve()
    step(f"starting the sandbox in {base / 'sandbox'} (MIT KDC with SOURCE.TEST and TARGET.TEST, two Kafka clusters)")
    sb = start_sandbox(base)
    try:
        step(f"creating {', '.join(DEMO_TOPICS)} on the source with {records} records each")
        load_data(sb, records)
        profile = load_profile(sb.profile_path)
        out = base / "rendered"
        step(f"rendering every credential and client file from {sb.profile_path}")
        render_all(profile, out, secrets=REFERENCES)  # as render does: no rendered file holds a secret
        step(f"granting the {grant_rendered_acls(sb, out)} ACLs that render wrote (acls/*.acls.json) as the admin")
        return _finish(sb, profile, out, records)
    finally:
        if not keep_sandbox:
            sb.down()


def _finish(sb: Sandbox, profile, out: Path, records: int) -> int:
    step(
        "pre-flight: keytabs, tickets, broker service names, TLS trust and ACLs on both clusters, and the admin "
        "audit proving WRITE on the target topics the mirror will create"
    )
    admin = admin_clusters(
        profile,
        ",".join(
            f"{side}.principal={sb.sides[side].admin_principal},{side}.keytab={sb.keytab(side, 'admin')}"
            for side in ("source", "target")
        ),
    )
    report = run_preflight(profile, admin=admin)
    render_table(report)
    if not report.ok():
        return EXIT_FAILED
    step("mirroring until caught up (Spark Structured Streaming, local mode, two identities in one JVM)")
    code = run_mirror(profile, until_caught_up=True, skip_preflight=True, run_dir=str(out.parent / "run"))
    if code != EXIT_OK:
        return code
    step("lag: what the checkpoint committed against the source's end offsets")
    print(format_table(lag(profile)))
    step("verifying that the target holds what the source holds")
    result = verify(profile)
    print(result.text())
    total = records * len(DEMO_TOPICS)
    print(
        f"\nmirrored {total} records of {len(DEMO_TOPICS)} topics from {profile.source.alias} "
        f"({profile.source.sasl.principal}) to {profile.target.alias} ({profile.target.sasl.principal})"
    )
    print(f"rendered files: {out} (see {out / 'MANIFEST.md'}); job log and metrics: {out.parent / 'run'}")
    return EXIT_OK if result.ok else EXIT_FAILED
