"""One cut-over contender on the sandbox (:class:`Contender`): the scenario built under names of its own (topics,
groups, producer and reader principals with their grants, committed offsets), the mirror started and caught up, the
producers writing until refused, the cut-over (``secure-mirror cutover``, or MirrorMaker 2's manual procedure,
benchmarks/cutover/manual.py), and every group read on the target afterwards."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path

from benchmarks.cutover import manual
from benchmarks.cutover.scenario import group_reads, step_times, summed
from benchmarks.failover.scenario import MM2_INTERVALS
from benchmarks.harness import admin, cli, reading
from benchmarks.harness.bench import Bench, exactly_once
from benchmarks.harness.launch import REPO, mirrormaker2_argv, stop
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl
from secure_mirror.kafka.processes import pid_alive
from secure_mirror.profile import load_profile
from secure_mirror.render import acls as render_acls
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.sandbox.waiting import caught_up, wait_for

WRITE_EVERY = 0.05
CLI = [sys.executable, "-m", "secure_mirror"]

log = cli.prefixed("cutover")


def write_until_refused(conf: dict, topics: list[str], stop: str, tag: str) -> dict:
    """A producer writing its topics in turn, a record every 50 ms, until the authorizer refuses one or the file
    ``stop`` exists (it runs in a process of its own identity)."""
    from confluent_kafka import KafkaException, Producer

    acked, errors = [0], []

    def delivered(err, _msg):
        if err is None:
            acked[0] += 1
        else:
            errors.append(err.name())

    producer = Producer({**conf, "acks": "all", "enable.idempotence": True, "logger": admin_ops.LOG})
    n = 0
    while not errors and not Path(stop).exists():
        try:
            producer.produce(topics[n % len(topics)], value=f"{tag}|{n}".encode(), on_delivery=delivered)
        except KafkaException as error:  # the topic's metadata says the producer may no longer write it
            errors.append(error.args[0].name())
        producer.poll(WRITE_EVERY)
        n += 1
    producer.flush(60)
    return {"acked": acked[0], "first_error": errors[0] if errors else None}


def prefixed(principal: str, resource_type: str, name: str, *operations: str) -> list[Acl]:
    """ALLOW ``operations`` on the resources whose names start with ``name``."""
    return [
        Acl(principal=principal, operation=op, resource_type=resource_type, resource_name=name, pattern_type="PREFIXED")
        for op in operations
    ]


class Contender:
    def __init__(self, b: Bench, name: str, run_id: str, plan: dict, spark_conf: dict):
        self.b, self.name, self.plan, self.spark_conf = b, name, plan, spark_conf
        self.prefix = f"cb{run_id}{'eos' if name == 'secure_mirror' else 'mm2'}"
        self.alias = f"{self.prefix}a"
        self.sb = b.sb
        self.conf = {side: self.sb.client_conf(side, "admin") for side in ("source", "target")}
        self.work = b.work / name
        self.work.mkdir()
        self.granted: dict[str, list[Acl]] = {"source": [], "target": []}
        self.principals: list[str] = []
        self.stop_writing = self.work / "stop-writing"
        self.writers: dict[str, dict] = {}
        self.threads: list[threading.Thread] = []

    def topic(self, short: str) -> str:
        return f"{self.prefix}.{short}"

    def group(self, short: str) -> str:
        return f"{self.prefix}-{short}"

    def who(self, short: str) -> str:
        return f"{self.prefix}{short}"

    # -- set-up
    def profile(self) -> Path:
        self.b.topic = self.prefix

        def edit(data: dict) -> None:
            data["source"]["alias"] = self.alias
            data["mirror"]["topics"] = {"include": f"{re.escape(self.prefix)}\\..*"}
            groups = f"{re.escape(self.prefix)}-g.*"
            if self.name == "mirrormaker2":
                data["mirror"]["mm2"]["properties"].update(
                    {"emit.checkpoints.enabled": True, "sync.group.offsets.enabled": True, "groups": groups}
                )
                data["mirror"]["mm2"]["properties"].update(MM2_INTERVALS)
            else:
                data["mirror"]["groups"] = {"include": groups}
                data["mirror"]["spark"].setdefault("conf", {}).update(self.spark_conf)
                exactly_once(data)

        self.path = self.b.profile(self.name, edit=edit)
        self.model = load_profile(self.path)
        return self.path

    def grant(self, side: str, acls: list[Acl | dict]) -> None:
        acls = [Acl.of(a) for a in acls]
        self.sb.admin(side, admin_ops.create_acls, acls)
        self.granted[side] += acls

    def set_up(self) -> None:
        path = self.profile()
        self.rendered = self.b.render(path)
        if self.name == "mirrormaker2":
            for side, acls in self.b.grant(self.rendered, principals=("User:mirror",)).items():
                self.granted[side] += [Acl.of(a) for a in acls]
        else:  # the mirror's grants, and what group sync needs of the groups (tests/support/mirror_case.with_groups)
            mirror = render_acls.source_acls(self.model).bindings[0].principal
            self.grant("source", [asdict(b) for b in render_acls.source_acls(self.model).bindings])
            self.grant("target", [asdict(b) for b in render_acls.target_acls(self.model).bindings])
            groups = f"{self.prefix}-g"
            self.grant("source", prefixed(mirror, "GROUP", groups, "DESCRIBE"))
            self.grant("source", prefixed(mirror, "TOPIC", self.prefix, "DESCRIBE_CONFIGS"))
            self.grant("target", prefixed(mirror, "GROUP", groups, "READ", "DESCRIBE"))
            self.grant("target", prefixed(mirror, "TOPIC", self.alias, "READ"))
        records = self.plan["records"]
        self.topics = {self.topic(t): len(parts) for t, parts in records.items()}
        self.sb.admin("source", admin_ops.create_topics, self.topics, replication_factor=self.sb.replication_factor)
        for t, parts in records.items():
            rows = [{"value": f"{t}|{p}|{i}".encode(), "partition": p} for p, n in enumerate(parts) for i in range(n)]
            self.sb.admin("source", admin_ops.produce, self.topic(t), rows)
        offsets = {
            self.group(g): {self.topic(t): dict(enumerate(positions)) for t, positions in topics.items()}
            for g, topics in self.plan["committed"].items()
        }
        if refused := admin.commit_many(self.conf["source"], offsets):
            raise RuntimeError(
                f"{len(refused)} groups' offsets not committed on the source: {next(iter(refused.items()))}"
            )
        realm = self.sb.sides["source"].realm
        self.producer_topics: dict[str, list[str]] = {}
        for t, p in self.plan["producer"].items():
            self.producer_topics.setdefault(p, []).append(self.topic(t))
        for p, topics in self.producer_topics.items():
            principal = f"{self.who(p)}@{realm}"
            self.sb.kdc().add_principal(principal, self.work / f"{principal}.keytab")
            self.principals.append(principal)
            self.grant(
                "source",
                [
                    Acl(principal=f"User:{self.who(p)}", operation="WRITE", resource_type="TOPIC", resource_name=t)
                    for t in topics
                ],
            )
        self.reader_grants: dict[str, list[Acl]] = {}
        for g, r in self.plan["reader"].items():
            user = f"User:{self.who(r)}"
            mine = self.reader_grants.setdefault(r, [])
            mine.append(Acl(principal=user, operation="READ", resource_type="GROUP", resource_name=self.group(g)))
            for t in self.plan["committed"][g]:
                acl = Acl(principal=user, operation="READ", resource_type="TOPIC", resource_name=self.topic(t))
                if acl not in mine:
                    mine.append(acl)
        self.grant("source", [a for grants in self.reader_grants.values() for a in grants])
        self.committed_source = {
            self.group(g): {self.topic(t): pos for t, pos in topics.items()}
            for g, topics in self.plan["committed"].items()
        }

    def producer_identity(self, short: str):
        """The producer principal's own identity on the source (its keytab, a credential cache of its own)."""
        principal = f"{self.who(short)}@{self.sb.sides['source'].realm}"
        identity = replace(
            self.sb.identity("source", "admin").with_settings(
                {"sasl.kerberos.principal": principal, "sasl.kerberos.keytab": str(self.work / f"{principal}.keytab")}
            ),
            ccache=str(self.work / f"{short}.ccache"),
        )
        return identity

    def start_producers(self) -> None:
        for p, topics in self.producer_topics.items():
            identity = self.producer_identity(p)

            def write(p=p, topics=topics, identity=identity) -> None:
                self.writers[p] = identity.call(
                    write_until_refused, topics, str(self.stop_writing), f"{self.prefix}{p}"
                )

            thread = threading.Thread(target=write, daemon=True)
            thread.start()
            self.threads.append(thread)

    def stop_producers(self) -> dict:
        self.stop_writing.touch()
        for thread in self.threads:
            thread.join(120)
        return self.writers

    # -- the contenders
    def run(self) -> dict:
        self.set_up()
        log_file = self.work / f"{self.name}.log"
        run_dir = self.work / "run"
        if self.name == "mirrormaker2":
            argv = mirrormaker2_argv(self.rendered)
        else:
            argv = [*CLI, "run", str(self.path), "--skip-preflight", "--run-dir", str(run_dir)]
            argv += ["--trigger-interval", "1 second"]
        out: dict = {"prefix": self.prefix, "log": str(log_file)}
        with open(log_file, "w") as fh:
            started = time.monotonic()
            proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        try:
            self.wait_caught_up(proc)
            out["caught_up_seconds"] = time.monotonic() - started
            log(f"{self.name}: caught up after {out['caught_up_seconds']:.0f} s; producers start")
            self.start_producers()
            time.sleep(5)
            if self.name == "mirrormaker2":
                out.update(manual.procedure(self, proc))
            else:
                out.update(self.cutover(run_dir))
        finally:
            out["producers"] = self.stop_producers()
            stop(proc)
            driver = ControlFolder(run_dir).pid() if run_dir.exists() else None
            if driver is not None and pid_alive(driver):
                os.killpg(os.getpgid(driver), 9)
        out["reads"] = self.reads()
        return out

    def wait_caught_up(self, proc: subprocess.Popen) -> None:
        def done() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {proc.returncode} before it caught up")
            if self.name != "mirrormaker2":
                return bool(caught_up(self.model, set(self.topics)))
            try:
                target = reading.ends_of(
                    self.conf["target"], {self.model.target_topic(t): n for t, n in self.topics.items()}
                )
            except Exception:  # noqa: BLE001 - not created yet
                return False
            source = reading.ends_of(self.conf["source"], self.topics)
            return all(target[self.model.target_topic(t)] == source[t] for t in source)

        wait_for(done, 600, f"{self.name} to catch up", step=2.0)

    def cutover(self, run_dir: Path) -> dict:
        admin = ",".join(
            f"{side}.principal={self.sb.sides[side].admin_principal},{side}.keytab={self.sb.keytab(side, 'admin')}"
            for side in ("source", "target")
        )
        argv = [*CLI, "cutover", str(self.path), "--all-groups", "--as-admin", admin, "--run-dir", str(run_dir)]
        t0 = time.monotonic()
        done = subprocess.run([*argv, "--timeout", "300"], capture_output=True, text=True, timeout=1800)
        wall = time.monotonic() - t0
        (self.work / "cutover.out").write_text(done.stdout + done.stderr)
        report = json.loads((run_dir / "cutover-report.json").read_text())
        for change in report.get("acls", []):  # removed at the end with the rest
            if change["change"] == "added":
                self.granted[change["cluster"]].append(Acl.of(change["binding"]))
        times = step_times(report)
        log(f"secure_mirror: cutover exit {done.returncode} in {wall:.1f} s: {json.dumps(times)}")
        if done.returncode != 0:
            raise RuntimeError(f"cutover exited with {done.returncode}: {done.stderr[-800:]}")
        return {
            "exit": done.returncode,
            "wall_seconds": wall,
            "times": times,
            "groups_moved": len({g["group"] for g in report["groups"]}),
            "acl_changes": len(report["acls"]),
            "steps_by_hand": [
                {"step": "secure-mirror cutover PROFILE --all-groups --as-admin ... --run-dir DIR", "by_hand": 1}
            ],
        }

    def reads(self) -> dict:
        """Each group read on the target from its committed offsets, against what it had not consumed."""
        source = {
            t: reading.records_from(self.conf["source"], t, dict.fromkeys(range(n), 0), "cb-reader")[0]
            for t, n in self.topics.items()
        }
        target, ends = {}, {}
        for t, n in self.topics.items():
            records, end = reading.records_from(
                self.conf["target"], self.model.target_topic(t), dict.fromkeys(range(n), 0), "cb-reader"
            )
            target[t], ends[t] = records, end
        held = admin.group_offsets(self.conf["target"], sorted(self.committed_source))
        per_group = {}
        for g, committed in self.committed_source.items():
            by_source = {t: held[g].get(self.model.target_topic(t), {}) for t in committed}
            per_group[g] = group_reads(committed, by_source, source, target, ends)
        return {
            "total": summed(per_group),
            "groups": per_group,
            "source_records": sum(len(v) for v in source.values()),
            "target_records": sum(len(v) for v in target.values()),
        }

    def tear_down(self) -> None:
        for side in ("source", "target"):
            try:
                self.sb.admin(side, admin_ops.delete_acls, self.granted[side])
                mine = [t for t in self.sb.admin(side, admin_ops.list_topics) if self.prefix in t or self.alias in t]
                admin.delete_and_wait(self.conf[side], mine)
            except Exception as exc:  # noqa: BLE001 - a sandbox of its own goes down anyway
                log(f"{self.name}: clean-up on {side}: {exc}")
        for principal in self.principals:
            self.sb.kdc().delete_principal(principal)
