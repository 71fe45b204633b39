"""``cutover --dry-run`` and ``failback --dry-run`` as a user runs them (``cli.main``), with the clusters answered in
memory: the printed lines are the steps' previews in the order the steps run, nothing is written, and the whole
command opens one identity folder, whose one set of identities every reader of the check step is handed (pre-flight,
lag, the heartbeat, the groups' session; on the way back the forward's offset map is read through the same set)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from secure_mirror import cli
from secure_mirror.cutover import machine, steps
from secure_mirror.cutover import record as records
from secure_mirror.cutover.notes import AclChange, FenceNote, Notes
from secure_mirror.cutover.steps import check, sync
from secure_mirror.cutover.way_back import Reversed
from secure_mirror.errors import EXIT_FAILED, EXIT_OK
from secure_mirror.identities import Identities, IdentityFolder
from secure_mirror.kafka.acl import Acl
from secure_mirror.preflight.model import Report
from secure_mirror.preflight.probes.kafka_admin import acls as acl_probes
from tests.support import profiles as pf
from tests.unit.cutover.test_failback import _both
from tests.unit.cutover.test_plans import acl, deny

APP = acl("User:app", "WRITE", "orders.eu")  # removed by the fence
ETL = acl("User:etl", "WRITE", "orders.", "PREFIXED")  # kept, with a DENY per selected topic
READER = [acl("User:reader", "READ", "orders.eu"), acl("User:reader", "READ", "g", resource_type="GROUP")]
TOPICS = {"orders.eu": 2, "payments": 1, "other": 1}


class FakeSession:
    """The groups' session, answering with one translatable group; records the identities it was handed."""

    def __init__(self, profile, known=None, *, identities=None):
        self.profile, self.maps = profile, {}
        handed.append(("Session", identities))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def read_map(self):
        return None

    def observe(self, groups):
        return SimpleNamespace(plan=lambda: SimpleNamespace(skipped={}))


handed: list[tuple[str, object]] = []


@pytest.fixture
def clusters(monkeypatch):
    """Both clusters' inventories by alias (the test fills them); the folders opened; the readers' identities."""
    handed.clear()
    held: dict[str, tuple[list[Acl], dict[str, int]]] = {}
    opened: list[IdentityFolder] = []
    real_init = IdentityFolder.__init__

    def counted(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        opened.append(self)

    def call(self, side, fn, *args, who="mirror", **kwargs):
        assert fn is acl_probes.read_acls and who == "admin", (fn, who)
        acls, topics = held[self.clusters[(side, who)].alias]
        return {"acls": acls, "topics": topics}

    def recorder(name, answer):
        def record(*args, identities=None, **kwargs):
            handed.append((name, identities))
            return answer

        return record

    monkeypatch.setattr(IdentityFolder, "__init__", counted)
    monkeypatch.setattr(Identities, "call", call)
    monkeypatch.setattr(check, "run_preflight", recorder("preflight", Report([])))
    monkeypatch.setattr(check, "lag", recorder("lag", []))
    monkeypatch.setattr(check, "lag_heartbeat", recorder("heartbeat", SimpleNamespace(age_ms=1000)))
    monkeypatch.setattr(check, "job_alive", lambda _run_dir: True)
    monkeypatch.setattr(sync, "Session", FakeSession)
    return SimpleNamespace(held=held, opened=opened)


def _said(out: str) -> list[str]:
    prefix = "secure-mirror cutover: "
    assert all(line.startswith(prefix) for line in out.splitlines()), out
    return [line[len(prefix) :] for line in out.splitlines()]


def test_the_cutover_dry_run_is_the_steps_previews_through_one_identity_set(tmp_path, clusters, capsys):
    profile = pf.load(tmp_path)  # rename alias_prefix: orders.eu is src.orders.eu on the target
    path, run_dir = str(tmp_path / "profile.yaml"), tmp_path / "run"
    run_dir.mkdir()
    clusters.held.update(src=([APP, ETL, *READER], TOPICS), tgt=([], {}))
    argv = ["cutover", path, "--group", "g", "--as-admin", path, "--run-dir", str(run_dir), "--dry-run"]
    assert cli.main(argv) == EXIT_OK
    said = _said(capsys.readouterr().out)
    target = profile.target_topic("orders.eu")
    promoted = [line.removeprefix("promote: would add on the target ") for line in said if line.startswith("promote: ")]
    assert said[: len(said) - len(promoted)] == [
        "dry run: nothing is changed or written",
        "check: would pass",
        f"fence: would add {deny('User:etl', 'orders.eu').words()}",
        f"fence: would remove {APP.words()}",
        "drain: would wait for the mirror to reach the fenced ends of 2 topic(s), then verify",
        "sync: would translate and commit g on the target",
        f"stop: would stop the job running from {run_dir}",
    ]
    assert f"ALLOW User:app WRITE on TOPIC LITERAL {target} (host *)" in promoted
    assert "ALLOW User:reader READ on GROUP LITERAL g (host *)" in promoted
    assert len(promoted) == len(set(promoted))  # each binding once, as promote sends them
    assert list(run_dir.iterdir()) == []  # no record, no report
    assert len(clusters.opened) == 1 and not clusters.opened[0].path.exists()  # one folder, removed at the end
    assert [name for name, _ in handed] == ["preflight", "lag", "heartbeat", "Session"]
    assert len({id(identities) for _, identities in handed}) == 1
    assert handed[0][1].folder is clusters.opened[0]


def test_a_producer_the_fence_cannot_stop_makes_the_dry_run_exit_1(tmp_path, clusters, capsys):
    pf.load(tmp_path)
    path, run_dir = str(tmp_path / "profile.yaml"), tmp_path / "run"
    run_dir.mkdir()
    everyone = acl("User:*", "WRITE", "orders.eu")
    clusters.held.update(src=([APP, everyone], TOPICS), tgt=([], {}))
    argv = ["cutover", path, "--group", "g", "--as-admin", path, "--run-dir", str(run_dir), "--dry-run"]
    assert cli.main(argv) == EXIT_FAILED
    said = _said(capsys.readouterr().out)
    assert any(line.startswith(f"fence: would stop: {everyone.words()}: the wildcard principal") for line in said)


def _forward_cutover(tmp_path, forward_text: str) -> None:
    """A complete cut-over in ``tmp_path/run``: its fence removed APP on the source, its promotion added APP's WRITE
    and DESCRIBE on the target (kept names)."""
    promoted = [APP, acl("User:app", "DESCRIBE", "orders.eu")]
    key = records.command_key(forward_text, records.CUTOVER, ["g"])
    done = records.Record.start(key, steps.names(records.CUTOVER))
    for step in done.steps:
        done.begin(step.name, "t")
        done.finish(step.name, "t", {})
    done.notes = Notes(
        fence=FenceNote(remove=(APP,)), acls=[AclChange("target", "added", "User:admin", a) for a in promoted]
    )
    machine.record_file(tmp_path / "run").save(done)


def test_the_failback_dry_run_names_each_cluster_and_reads_the_forward_map_through_the_same_set(
    tmp_path, clusters, capsys
):
    forward, back = _both(tmp_path)  # kept names, provenance headers; the way back in tmp_path/back
    path, back_path = tmp_path / "profile.yaml", tmp_path / "back" / "profile.yaml"
    _forward_cutover(tmp_path, path.read_text(encoding="utf-8"))
    back_dir = tmp_path / "run-back"
    back_dir.mkdir()
    held_on_target = [APP, acl("User:app", "DESCRIBE", "orders.eu")]
    clusters.held.update(tgt=(held_on_target, TOPICS), src=([], TOPICS))
    argv = ["failback", str(path), "--back", str(back_path), "--as-admin", str(path), "--run-dir"]
    argv += [str(tmp_path / "run"), "--back-run-dir", str(back_dir), "--dry-run"]
    assert cli.main(argv) == EXIT_OK
    src, tgt = forward.source.alias, forward.target.alias
    assert _said(capsys.readouterr().out) == [
        "dry run: nothing is changed or written",
        "check: would pass",
        f"fence: would remove on {tgt} {APP.words()}",
        "drain: would wait for the mirror to reach the fenced ends of 2 topic(s), then verify",
        f"sync: would translate and commit g on {src}",
        f"stop: would stop the job running from {back_dir}",
        f"restore: would add on {src} {APP.words()}",
        *(f"restore: would remove on {tgt} {binding.words()}" for binding in held_on_target),  # what promote added
    ]
    assert list(back_dir.iterdir()) == []
    assert len(clusters.opened) == 1
    names = [name for name, _ in handed]
    assert names == ["preflight", "lag", "heartbeat", "Session", "Session"]
    sets = [identities.identities if isinstance(identities, Reversed) else identities for _, identities in handed]
    assert isinstance(handed[3][1], Reversed) and len({id(s) for s in sets}) == 1  # the forward's map, the same set
