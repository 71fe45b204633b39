"""The mirrors that go through the three-broker faults (tests/reliability/test_three_broker_faults.py), no tests here.

``SECURE_MIRROR_THREE_BROKER_CONTENDERS="ours|mm2|mm2-eos"`` chooses them (default ``ours``, in either setting: on
this project's two-CPU machines each invocation runs one side of the comparison, and the results files merge them,
tests/reliability/contender_results.py):

- ``ours``: two secure_mirror jobs at once, ``exactly_once`` and ``at_least_once`` (harness.MirrorUnderLoad), keyed
  by their guarantee;
- ``mm2``: MirrorMaker 2 in dedicated mode (``org.apache.kafka.connect.mirror.MirrorMaker``) from the
  ``mm2/mm2.properties`` that ``render`` writes for the case's profile, as benchmarks/harness/launch.py starts it, with
  ``tasks.max`` the job's task slots (2); its grants are the rendered ``acls/mm2-*.acls.json`` alone;
- ``mm2-eos``: the same with exactly-once source support (KIP-618), the settings and the extra grants of
  benchmarks/harness/contenders.py's ``mirrormaker2_exactly_once`` (``mm2_exactly_once``, ``mm2_exactly_once_acls``).

Each MirrorMaker 2 gets cluster aliases of its own (:data:`ALIASES`), so its Connect group (``<source alias>-mm2``),
its internal topics and its heartbeats are its own: two of them, or one beside our jobs, never share a Connect
cluster. Each runs under the same load as our jobs (:class:`MirrorMakerUnderLoad`, a
:class:`~tests.reliability.harness.MirrorUnderLoad` whose "job" is MirrorMaker 2): its own source topic, an idempotent
and a transactional producer (every 5th transaction aborted), and the same independent read_committed count at the
end (no ``verify``: that is secure_mirror's). Its "restarts" are its failed tasks (:func:`failed_tasks`): Connect
never restarts a failed task by itself, so a failed task stops mirroring its partitions until an operator restarts
it. It runs on Kafka's jars without a log4j configuration, as benchmarks/harness/launch.py starts it, so its log
(``mm2-1.log`` in its folder) holds log4j's default, the ERROR lines, Connect's words for a failed task among them;
stopped by SIGTERM at the end, it exits 143.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from benchmarks.harness import contenders as bench_contenders
from benchmarks.harness.launch import mirrormaker2_argv
from secure_mirror.kafka import admin_ops
from secure_mirror.profile import load_profile
from secure_mirror.render import acls
from secure_mirror.render.tree import render_all
from secure_mirror.run.clients import watermarks
from secure_mirror.sandbox.waiting import wait_for

from .harness import MirrorUnderLoad, Outcome

SELECTOR = "SECURE_MIRROR_THREE_BROKER_CONTENDERS"
CONTENDERS = {"ours": ("exactly_once", "at_least_once"), "mm2": ("mm2",), "mm2-eos": ("mm2-eos",)}
GUARANTEE = {"exactly_once": "exactly_once", "at_least_once": "at_least_once", "mm2": "at_least_once"}
GUARANTEE["mm2-eos"] = "exactly_once"
LABELS = {
    "exactly_once": "secure_mirror exactly_once",
    "at_least_once": "secure_mirror at_least_once",
    "mm2": "MirrorMaker 2",
    "mm2-eos": "MirrorMaker 2, exactly-once (KIP-618)",
}
ALIASES = {"mm2": ("mmsrc", "mmtgt"), "mm2-eos": ("eossrc", "eostgt")}  # (source, target) of each MirrorMaker 2
TASKS = 2  # MirrorMaker 2's tasks.max: as many as the job's task slots (local[2]), as the benchmark gives it
# Connect's words for a task or connector that failed (Kafka's WorkerTask.doRun and
# AbstractWorkerSourceTask.initializeAndStart; WorkerConnector's for a connector): it stays failed until restarted
FAILED = re.compile(
    r"Task threw an uncaught and unrecoverable exception\. Task is being killed"
    r"|Task failed initialization and will not be started"
    r"|Connector has failed|Error while starting connector"
)


def selected(text: str | None = None) -> list[str]:
    """The contenders ``SECURE_MIRROR_THREE_BROKER_CONTENDERS`` names (``ours`` when unset), in the order of
    :data:`CONTENDERS`; an unknown name is refused with the known ones."""
    text = os.environ.get(SELECTOR, "") if text is None else text
    given = [part.strip() for part in (text or "ours").split("|") if part.strip()]
    unknown = [name for name in given if name not in CONTENDERS]
    if unknown:
        raise ValueError(f"{SELECTOR}: unknown contender(s) {unknown}; known: {'|'.join(CONTENDERS)}")
    return [name for name in CONTENDERS if name in given]


def mirrors(names: list[str]) -> list[str]:
    """The mirrors (load keys) of the contenders ``names``: ours' two guarantees, or a MirrorMaker 2."""
    return [key for name in names for key in CONTENDERS[name]]


def failed_tasks(text: str) -> int:
    """How many times a MirrorMaker 2 log says a task (or a connector) failed (:data:`FAILED`)."""
    return len(FAILED.findall(text))


def _mm2_hook(key: str):
    """The MirrorMaker 2 profile: its own aliases, ``tasks.max``, and exactly-once for ``mm2-eos``."""

    def apply(data: dict) -> None:
        data["source"]["alias"], data["target"]["alias"] = ALIASES[key]
        properties: dict[str, object] = {"tasks.max": TASKS}
        if key == "mm2-eos":
            properties.update(bench_contenders.mm2_exactly_once(data["target"]["alias"]))
        data["mirror"].setdefault("mm2", {})["properties"] = properties

    return apply


class MirrorMakerUnderLoad(MirrorUnderLoad):
    """MirrorMaker 2 (``key`` ``mm2`` or ``mm2-eos``) under the harness's load; :meth:`start_job` starts it,
    :meth:`finish` waits until the target holds every record (the independent count), stops it and counts."""

    def __init__(self, sandbox, folder: Path, key: str, *, partitions: int, rate: float, transactional_rate: float):
        super().__init__(
            sandbox,
            folder,
            partitions=partitions,
            rate=rate,
            transactional_rate=transactional_rate,
            profile_hook=_mm2_hook(key),
            name=key,
        )
        self.key = key
        self.exactly_once = key == "mm2-eos"
        self.rendered = self.folder / "rendered"
        render_all(load_profile(self.profile_path), self.rendered)
        acls = {side: json.loads((self.rendered / "acls" / f"mm2-{side}.acls.json").read_text()) for side in SIDES}
        if self.exactly_once:
            principals = tuple(sorted({a["principal"] for a in acls["target"]}))
            acls["target"] += bench_contenders.mm2_exactly_once_acls(self.profile.source.alias, principals)
        self.case.acls = acls  # MirrorMaker 2's grants alone, not the job's (granted on entering, revoked after)
        self.stalled = False  # a failed task stopped it mirroring (it does not restart by itself)

    def __enter__(self) -> MirrorMakerUnderLoad:
        self.forget()  # what an earlier run left (its Connect configs, offsets and status)
        super().__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self.forget()

    def forget(self) -> None:
        """Delete its own internal topics on both sides (:func:`acls.mm2_own_topics`, its aliases' alone), but the
        target's ``heartbeats``, which every flow into the target shares."""
        for side in SIDES:
            own = {*acls.mm2_own_topics(self.profile, side, False), *acls.mm2_own_topics(self.profile, side, True)}
            there = set(self.sb.admin(side, admin_ops.list_topics))
            gone = sorted((own - {"heartbeats"}) & there)
            if gone:
                self.sb.admin(side, admin_ops.delete_topics, gone)

    def _kill_everything(self) -> None:
        if self.job is not None and self.job.poll() is None:
            self.job.kill()
            self.job.wait(30)

    @property
    def group(self) -> str:
        """Its Connect worker group on the target (dedicated mode)."""
        return f"{self.profile.source.alias}-mm2"

    @property
    def transactional_prefix(self) -> str:
        """The transactional ids of its connectors' tasks with exactly-once (KIP-618): ``<group>-<connector>-<n>``."""
        return f"{self.group}-"

    def start_job(self, **_ignored) -> subprocess.Popen:
        assert self.job is None or self.job.poll() is not None, "MirrorMaker 2 is still running"
        self.starts += 1
        self.run_dir = self.folder / f"mm2-{self.starts}"
        self.run_dir.mkdir(exist_ok=True)
        self.cli_log = self.folder / f"mm2-{self.starts}.log"
        with open(self.cli_log, "w") as log:
            self.job = subprocess.Popen(
                mirrormaker2_argv(self.rendered),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        return self.job

    def failed_tasks_so_far(self) -> int:
        return failed_tasks(self.cli_log.read_text(errors="replace")) if self.cli_log.exists() else 0

    def supervised_restarts_so_far(self) -> int:
        """MirrorMaker 2's "restarts": its failed tasks (module doc)."""
        return self.failed_tasks_so_far()

    def run_lines(self) -> list[dict]:
        return []

    def log_tail(self, lines: int = 40) -> str:
        if not self.cli_log.exists():
            return ""
        return f"--- {self.cli_log}\n" + "\n".join(self.cli_log.read_text(errors="replace").splitlines()[-lines:])

    def target_ends(self) -> int:
        """The sum of the target topic's end offsets now (0 before MirrorMaker 2 created it)."""
        if self.target_topic not in self.sb.admin("target", admin_ops.list_topics):
            return 0
        return sum(high for _low, high in self.sb.admin("target", watermarks, [self.target_topic]).values())

    def wait_for_batches(self, count: int = 1, timeout: float = 240.0, *, with_records: bool = True) -> int:
        """Until the target topic grew ``count`` times (MirrorMaker 2 has no batches; its writes show as the target's
        end offsets moving); returns the last sum of end offsets."""
        seen = self.target_ends()
        for _ in range(count):
            seen = wait_for(lambda s=seen: self._grown(s), timeout, "MirrorMaker 2 to write to the target", step=0.5)
        return seen

    def _grown(self, seen: int) -> int | None:
        self._fail_if_ended("it wrote again")
        now = self.target_ends()
        return now if now > seen else None

    def source_marks(self) -> dict:
        return self.sb.admin("source", watermarks, [self.source_topic])

    def caught_up_to(self, marks: dict) -> bool:
        raise NotImplementedError("MirrorMaker 2 is judged by the independent readers (tests/reliability/tail.py)")

    def finish(self, drain_timeout: float = 300.0) -> Outcome:
        """Stop producing; wait until the independent count finds every record the source holds on the target (or
        ``drain_timeout``), stop MirrorMaker 2 (SIGTERM), then count."""
        produced = self.stop_producing()
        deadline = time.monotonic() + drain_timeout
        while time.monotonic() < deadline and not self.stalled:
            _on_target, _acked, missing, _dup, _counted = self.count_target(produced)
            if not missing:
                break
            time.sleep(15.0)
        code = self.stop_job()
        self.outcome = self._counted(produced, code)
        return self.outcome

    def stop_job(self, sig: int = 15, timeout: float = 90.0) -> int:
        if self.job.poll() is None:
            self.job.send_signal(sig)
            try:
                self.job.wait(timeout)
            except subprocess.TimeoutExpired:
                self.job.kill()
                self.job.wait(30)
        self.exit_codes.append(self.job.returncode)
        return self.job.returncode

    def _counted(self, produced: dict, code: int) -> Outcome:
        """The figures of :class:`Outcome` (not added to the suite's ``STATS``: those are our jobs')."""
        _on_target, acked, missing, duplicated, counted = self.count_target(produced)
        return Outcome(
            produced=len(acked),
            lost=len(missing),
            duplicated=duplicated,
            restarts=self.failed_tasks_so_far(),
            sent=produced["sent"],
            exit_codes=[code],  # 143: a JVM ended by the SIGTERM that stops it
            verify_missing=None,  # secure_mirror's verify is not MirrorMaker 2's judge: the count is
            verify_duplicated=None,
            verify_extra=None,
            verify_ok=None,
            lost_examples=missing[:10],
            producer_errors=produced["errors"],
            **counted,
        )


SIDES = ("source", "target")
