"""The mirror under load, for the reliability suite (no tests here).

``MirrorUnderLoad`` is a :class:`tests.support.mirror_case.MirrorCase` (own topics, own checkpoint, ACLs
granted and revoked) with

- a background producer: ONE spawned process, logged in as the source's admin, producing sequence-numbered
  records at a steady rate with ``acks=all`` and idempotence, and remembering which sequence numbers the broker
  acknowledged (only those count as produced);
- the job as a real process: ``python -m secure_mirror run PROFILE --skip-preflight --run-dir DIR
  [--supervise] [--json]`` in a session of its own, so a signal reaches the CLI alone, while :meth:`kill_driver`
  SIGKILLs the Spark driver (the process group of the ``job.pid`` the job writes to its control folder); with
  ``--json`` its lines are read back by :meth:`MirrorUnderLoad.run_lines` (:func:`json_lines_of`), and what they say
  of Spark's task retries by :func:`task_retries` (a line without the field is "not said": None, not 0);
- :meth:`finish`: stop producing, let the mirror catch up (the running job, or ``run --until-caught-up``), stop
  it, then ``verify`` and an independent count of every sequence number on the target: produced, lost
  (acknowledged but not on the target: must be 0), duplicated, restarts, the transactions the transactional
  producer aborted and their records. The figures go into ``conftest.STATS``.

Usage::

    with MirrorUnderLoad(sandbox, tmp_path, rate=200) as load:
        load.start_job()
        load.wait_for_batches(1)
        load.kill_driver()
        load.wait_job_exit()
        load.start_job()
        outcome = load.finish()
    assert outcome.lost == 0
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, astuple, dataclass, field
from pathlib import Path

import yaml

from secure_mirror.profile import load_profile
from secure_mirror.render import acls
from secure_mirror.run import checkpoint
from secure_mirror.run.clients import inspection, watermarks
from secure_mirror.run.control_folder import ControlFolder
from secure_mirror.sandbox import Sandbox
from secure_mirror.sandbox.waiting import wait_for
from secure_mirror.verify import verify
from secure_mirror.verify.digest import DEFAULT_CELLS
from tests.support import jvm_starts
from tests.support.mirror_case import MirrorCase
from tests.support.spawned import Spawned

from .conftest import STATS

CLI = [sys.executable, "-m", "secure_mirror"]
SEQ_HEADER = "seq"
ProfileHook = Callable[[dict], None]


# ---- the producer process ----------------------------------------------------------------------------------
def _record(seq: int, partitions: int, padding: bytes, tag: str) -> dict:
    """Record ``seq``: its key, its value, its sequence number as a header, its partition."""
    return {
        "key": f"{tag}{seq}".encode(),
        "value": b"seq=%d " % seq + padding,
        "headers": [(SEQ_HEADER, str(seq).encode())],
        "partition": seq % partitions,
    }


def _produce_loop(
    env: dict, conf: dict, topic: str, partitions: int, rate: float, size: int, acked_count, stop, out
) -> None:
    """Runs in its own spawned process: produce ``rate`` records/s until ``stop`` is set, then flush and send
    the acknowledged sequence numbers (and the delivery errors seen) through ``out``."""
    os.environ.update(env)
    import logging

    from confluent_kafka import Producer

    quiet = logging.getLogger("reliability.producer")  # outages are expected: count errors, don't print them
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False

    acked: list[int] = []
    errors: Counter = Counter()

    def delivered(seq: int, err) -> None:  # a delivery report carries no headers: the seq comes bound
        if err is None:
            acked.append(seq)
            acked_count.value = len(acked)
        else:
            errors[err.name()] += 1

    producer = Producer(
        {
            **conf,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "logger": quiet,
            "message.timeout.ms": 300000,
            "error_cb": lambda err: errors.update([err.name()]),
        }
    )
    padding = b"." * max(0, size - 24)
    seq, started, tick = 0, time.monotonic(), 0.05
    while not stop.is_set():
        due = int((time.monotonic() - started) * rate)
        while seq < due:
            try:
                producer.produce(
                    topic,
                    **_record(seq, partitions, padding, "k"),
                    on_delivery=lambda err, _msg, seq=seq: delivered(seq, err),
                )
            except BufferError:  # the local queue is full (a broker is down): try again at the next tick
                break
            seq += 1
        producer.poll(tick)
    unacknowledged = producer.flush(180)
    out.send({"acked": acked, "sent": seq, "unacknowledged": unacknowledged, "errors": dict(errors)})
    out.close()


def _transactional_loop(
    env: dict,
    conf: dict,
    topic: str,
    partitions: int,
    rate: float,
    size: int,
    acked_count,
    transactional_id: str,
    seq_base: int,
    abort_every: int,
    stop,
    out,
) -> None:
    """Runs in its own spawned process: ``rate`` records/s in transactions of up to 50 records, every
    ``abort_every``-th aborted, until ``stop`` is set; sends the sequence numbers of the committed transactions
    (``acked``), of the aborted ones (and how many transactions were aborted, ``aborted_transactions``), and of those
    whose outcome is unknown (the producer failed fatally and was
    replaced: its open transaction is aborted by the next ``init_transactions`` unless its commit had been
    decided)."""
    os.environ.update(env)
    import logging

    from confluent_kafka import KafkaException, Producer

    quiet = logging.getLogger("reliability.transactions")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    errors: Counter = Counter()
    done: dict[str, list[int]] = {"acked": [], "aborted": [], "unknown": []}

    def new_producer() -> Producer:
        producer = Producer(
            {
                **conf,
                "transactional.id": transactional_id,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "logger": quiet,
                "transaction.timeout.ms": 120000,
                "error_cb": lambda err: errors.update([err.name()]),
            }
        )
        _retried(lambda: producer.init_transactions(60), errors)
        return producer

    aborts = 0  # transactions whose abort the coordinator acknowledged

    def end(producer: Producer, batch: list[int], commit: bool) -> None:
        nonlocal aborts
        _retried(lambda: producer.commit_transaction(60) if commit else producer.abort_transaction(60), errors)
        done["acked" if commit else "aborted"].extend(batch)
        aborts += not commit
        acked_count.value = len(done["acked"])

    padding = b"." * max(0, size - 24)
    producer, seq, transactions, started = new_producer(), seq_base, 0, time.monotonic()
    while not stop.is_set():
        due = seq_base + int((time.monotonic() - started) * rate)
        if due <= seq:
            producer.poll(0.05)
            continue
        batch = list(range(seq, min(due, seq + 50)))
        seq, transactions = batch[-1] + 1, transactions + 1
        try:
            producer.begin_transaction()
            for s in batch:
                producer.produce(topic, **_record(s, partitions, padding, "t"))
            end(producer, batch, commit=transactions % abort_every != 0)
        except KafkaException as error:
            errors[error.args[0].name()] += 1
            if error.args[0].txn_requires_abort():
                try:
                    end(producer, batch, commit=False)
                    continue
                except KafkaException:
                    pass
            done["unknown"].extend(batch)  # fatal, or the abort failed: a new producer fences this one
            producer = new_producer()
    out.send({**done, "aborted_transactions": aborts, "sent": seq - seq_base, "errors": dict(errors)})
    out.close()


def _retried(call, errors: Counter, attempts: int = 10) -> None:
    """``call()`` again while it fails with a retriable error (a coordinator moving, a request timing out)."""
    from confluent_kafka import KafkaException

    for attempt in range(attempts):
        try:
            call()
            return
        except KafkaException as error:
            if not error.args[0].retriable() or attempt == attempts - 1:
                raise
            errors[error.args[0].name()] += 1
            time.sleep(1.0)


@dataclass(frozen=True)
class Transactions:
    """A transactional producer's settings: its id, its first sequence number (apart from the plain producer's),
    and every how many transactions one is aborted."""

    transactional_id: str
    seq_base: int = 1_000_000_000
    abort_every: int = 5


class BackgroundProducer(Spawned):
    """Sequence-numbered records into one topic, from one spawned process, as the source's admin: idempotent, or
    with ``transactions`` in transactions (some aborted). :meth:`stop` hands back ``result["acked"]``, the acknowledged
    sequence numbers."""

    STOP_TIMEOUT = 240.0  # the last acknowledgements may wait out an outage

    def __init__(
        self,
        sandbox,
        topic: str,
        partitions: int,
        rate: float,
        size: int = 200,
        transactions: Transactions | None = None,
    ):
        self._count = multiprocessing.get_context("spawn").Value("q", 0, lock=False)
        loop, name = (
            (_produce_loop, "reliability-producer")
            if transactions is None
            else (_transactional_loop, "reliability-transactions")
        )
        more = () if transactions is None else astuple(transactions)
        super().__init__(sandbox, "source", loop, topic, partitions, rate, size, self._count, *more, name=name)

    @property
    def acknowledged_so_far(self) -> int:
        if not self._process.is_alive() and self.result is None:
            raise AssertionError(f"the background producer died (exit {self._process.exitcode})")
        return self._count.value


# ---- what a target holds -----------------------------------------------------------------------------------
def count_sequences(conf: dict, topic: str, timeout: float = 120.0) -> dict[int, int]:
    """seq -> how many times it is on ``topic`` (all partitions, from the start to the high watermark), as an
    independent read_committed consumer reads it: records of aborted transactions are not counted.
    Runs in an identity's process (``kafka/processes.py``) (``sandbox.admin``)."""
    return {seq: len(at) for seq, at in sequence_positions(conf, topic, timeout).items()}


def sequence_positions(conf: dict, topic: str, timeout: float = 120.0) -> dict[int, list[tuple[int, int]]]:
    """seq -> every (partition, offset) holding it on ``topic``, read as :func:`count_sequences` reads."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            **conf,
            "group.id": "reliability-count",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        }
    )  # what a downstream reader sees (exactly_once)
    try:
        metadata = consumer.list_topics(topic, timeout=30)
        ends = {}
        for partition in metadata.topics[topic].partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            if high > low:
                ends[partition] = high
        consumer.assign([TopicPartition(topic, p, 0) for p in ends])
        found: dict[int, list[tuple[int, int]]] = {}
        deadline = time.monotonic() + timeout
        while ends:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} took more than {timeout:.0f} s; {len(ends)} partitions unread")
            for message in consumer.consume(num_messages=1000, timeout=1.0):
                if message.error() is not None:
                    if message.error().code() == KafkaError._PARTITION_EOF:
                        ends.pop(message.partition(), None)
                        continue
                    raise RuntimeError(str(message.error()))
                seq = int(dict(message.headers())[SEQ_HEADER])
                found.setdefault(seq, []).append((message.partition(), message.offset()))
                if message.offset() >= ends.get(message.partition(), 0) - 1:
                    ends.pop(message.partition(), None)
        return found
    finally:
        consumer.close()


# ---- the outcome -------------------------------------------------------------------------------------------
@dataclass
class Outcome:
    produced: int  # acknowledged by the source broker
    lost: int  # acknowledged, not on the target
    duplicated: int  # extra copies on the target
    restarts: int  # job starts from the checkpoint after the first (by the test or by --supervise)
    sent: int = 0  # handed to the producer (acknowledged or not)
    verify_missing: int | None = 0  # None: verify did not run (MirrorMaker 2, tests/reliability/contenders.py)
    verify_duplicated: int | None = 0
    verify_extra: int | None = 0
    verify_ok: bool | None = False
    exit_codes: list[int] = field(default_factory=list)  # of every `secure-mirror run`, in order
    lost_examples: list[int] = field(default_factory=list)
    producer_errors: dict = field(default_factory=dict)
    # with a transactional producer (MirrorUnderLoad's transactional_rate): produced is what a read_committed
    # reader of the source holds, lost counts what it holds or a producer was acknowledged for, missing on the target
    on_target: int | None = None  # records a read_committed reader of the target holds
    aborted_on_target: int | None = None  # records of aborted source transactions found on the target (must be 0)
    committed_not_on_source: int | None = (
        None  # committed or acknowledged, yet not on the source (the producers' check)
    )
    aborted_transactions: int | None = None  # transactions the transactional producer aborted (acknowledged)
    aborted_records: int | None = None  # the records in them (none of them may reach the target)
    task_retries: int | None = None  # Spark task attempts the job ran again, as `run --json` said (None: not said)

    def text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in asdict(self).items() if v is not None and (k != "lost_examples" or v))


# ---- what `run --json` said -----------------------------------------------------------------------------------
def json_lines_of(text: str) -> list[dict]:
    """The objects of ``text``'s lines that parse as JSON objects with a ``kind`` (``run --json``'s lines; the
    output beside them, sentences on stderr, and a line cut short are left out)."""
    found = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "kind" in value:
            found.append(value)
    return found


def task_retries(lines: list[dict]) -> int | None:
    """Spark task attempts the job ran again, as its lines said: the outcome's figure (``task_retries``, or its
    ``ridden`` object's), else the sum over its waits (each ``waiting`` line's ``task_retries`` counts its own wait:
    the highest of each wait, told apart by ``since``); None when no line said it (not 0)."""
    for line in reversed(lines):
        if line.get("kind") == "outcome":
            said = line.get("task_retries", (line.get("ridden") or {}).get("task_retries"))
            if isinstance(said, int):
                return said
    return waited_retries(lines)


def waited_retries(lines: list[dict]) -> int | None:
    """The task retries the ``waiting`` lines among ``lines`` said (the highest of each wait, summed); None when no
    waiting line carried the field."""
    waits: dict[str, int] = {}
    for line in lines:
        said = line.get("task_retries")
        if line.get("kind") == "waiting" and isinstance(said, int):
            key = str(line.get("since"))
            waits[key] = max(waits.get(key, 0), said)
    return sum(waits.values()) if waits else None


class _Case(MirrorCase):
    """A MirrorCase whose profile a hook may change (other principals, keytabs, Spark conf ...)."""

    def __init__(self, sandbox, folder: Path, hook: ProfileHook | None, **kwargs):
        super().__init__(sandbox, folder, **kwargs)
        if hook is None:
            return
        data = yaml.safe_load(self.profile_path.read_text())
        hook(data)
        self.profile_path.write_text(yaml.safe_dump(data, sort_keys=False))
        self.profile = load_profile(self.profile_path)
        self.acls = _acls_of(self.profile, kwargs.get("create_allowed", True))


def _acls_of(profile, create_allowed: bool) -> dict[str, list[dict]]:
    """The ACLs of a changed profile, derived as MirrorCase derives them."""
    out = {
        "source": [asdict(b) for b in acls.source_acls(profile).bindings],
        "target": [asdict(b) for b in acls.target_acls(profile).bindings if create_allowed or b.operation != "CREATE"],
    }
    out["target"].append({**out["target"][0], "operation": "READ"})  # verify reads the target
    return out


# ---- the harness -------------------------------------------------------------------------------------------
class MirrorUnderLoad:
    """A mirror case with a producer running for its whole life and the job as a process (see module doc)."""

    def __init__(
        self,
        sandbox,
        folder: Path,
        *,
        partitions: int = 3,
        rate: float = 200.0,
        record_size: int = 200,
        trigger_interval: str = "1 second",
        profile_hook: ProfileHook | None = None,
        target_mechanism: str = "GSSAPI",
        name: str = "load",
        env: dict[str, str] | None = None,
        transactional_rate: float = 0.0,
    ):
        self.sb = sandbox
        self.folder = Path(folder)
        self.partitions, self.rate, self.record_size = partitions, rate, record_size
        self.trigger_interval = trigger_interval
        self.case = _Case(
            sandbox, self.folder, _with_local_dirs(profile_hook, self.folder), target_mechanism=target_mechanism
        )
        self.name = name
        self.env = env  # the job's environment (None: this one), e.g. a standalone cluster's client_env()
        self.producer: BackgroundProducer | None = None
        self.transactional_rate = transactional_rate  # records/s of a second, transactional producer (0: none)
        self.transactions: BackgroundProducer | None = None
        self.source_positions: dict[int, list[tuple[int, int]]] = {}  # as counted at the end (transactional)
        self.target_counts: dict[int, int] = {}
        self.job: subprocess.Popen | None = None
        self.run_dir: Path | None = None
        self.starts = 0
        self.restarts = 0  # starts from the checkpoint after the first, by the test (finish's drain excluded)
        self.exit_codes: list[int] = []
        self.supervised_restarts = 0
        self.outcome: Outcome | None = None

    # -- names
    @property
    def profile(self):
        return self.case.profile

    @property
    def profile_path(self) -> Path:
        return self.case.profile_path

    @property
    def source_topic(self) -> str:
        return self.case.topic(self.name)

    @property
    def target_topic(self) -> str:
        return self.profile.target_topic(self.source_topic)

    # -- life
    def __enter__(self) -> MirrorUnderLoad:
        self.case.__enter__()
        try:
            self.case.create({self.name: self.partitions})
            self.producer = BackgroundProducer(self.sb, self.source_topic, self.partitions, self.rate, self.record_size)
            if self.transactional_rate:
                self.transactions = BackgroundProducer(
                    self.sb,
                    self.source_topic,
                    self.partitions,
                    self.transactional_rate,
                    self.record_size,
                    Transactions(f"{self.case.prefix}-{self.name}-tx"),
                )
        except BaseException:
            self.case.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            if self.job is not None and self.job.poll() is None:
                self._kill_everything()
            for producer in (self.producer, self.transactions):
                if producer is not None:
                    producer.kill()
        finally:
            self.case.__exit__(*exc)

    # -- the job
    def start_job(
        self,
        *,
        supervise: bool = False,
        max_restarts: int = 10,
        until_caught_up: bool = False,
        trigger_interval: str | None = None,
        extra: tuple[str, ...] = (),
        json_lines: bool = False,
        _drain: bool = False,
    ) -> subprocess.Popen:
        """``secure-mirror run`` as a process in a session of its own (its output in ``cli-N.log``; with
        ``json_lines``, ``run --json``: its lines there too, read by :meth:`run_lines`)."""
        assert self.job is None or self.job.poll() is not None, "the previous job is still running"
        self.restarts += 1 if self.starts and not _drain else 0
        self.starts += 1
        self.run_dir = self.folder / f"run-{self.starts}"
        argv = [
            *CLI,
            "run",
            str(self.profile_path),
            "--skip-preflight",
            "--run-dir",
            str(self.run_dir),
            "--trigger-interval",
            trigger_interval or self.trigger_interval,
            "--status-interval",
            "5",
            *extra,
        ]
        if supervise:
            argv += ["--supervise", "--max-restarts", str(max_restarts)]
        if until_caught_up:
            argv.append("--until-caught-up")
        if json_lines:
            argv.append("--json")
        self.cli_log = self.folder / f"cli-{self.starts}.log"
        with open(self.cli_log, "w") as log:
            self.job = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=self.env,
            )
        return self.job

    def driver_pid(self, timeout: float = 180.0) -> int:
        """The pid of the job's Python driver (written to the run folder, its control folder), once it is written."""
        control = ControlFolder(self.run_dir)

        def read() -> int | None:
            self._fail_if_ended("its driver started")
            return control.pid()

        return wait_for(read, timeout, "the Spark driver's pid file", step=0.2)

    def committed_batch(self) -> int:
        found = checkpoint.committed_offsets(self.profile.mirror.checkpoint_location)
        return -1 if found is None else found[0]

    def wait_for_batches(self, count: int = 1, timeout: float = 240.0, *, with_records: bool = True) -> int:
        """Wait until the checkpoint has committed ``count`` batches more than now; returns the batch id."""
        start = self.committed_batch()
        acked = self.producer.acknowledged_so_far

        def advanced() -> int | None:
            self._fail_if_ended(f"{count} more batches were committed")
            batch = self.committed_batch()
            fresh = not with_records or self.producer.acknowledged_so_far > acked
            return batch if batch >= start + count and fresh else None

        return wait_for(advanced, timeout, f"{count} more committed batches", step=0.2)

    def kill_driver(self) -> int:
        """SIGKILL the Spark driver: the whole process group of the job (bash, the JVM and its Python), as the
        kernel's OOM killer or a lost container would. The CLI survives and sees the job fail."""
        pid = self.driver_pid()
        group = os.getpgid(pid)
        assert group not in (os.getpgid(0), self.job.pid), "the driver is not in a group of its own"
        os.killpg(group, signal.SIGKILL)
        return pid

    def stop_job(self, sig: int = signal.SIGTERM, timeout: float = 180.0) -> int:
        """Signal the ``secure-mirror run`` process alone; its exit code."""
        self.job.send_signal(sig)
        return self.wait_job_exit(timeout)

    def wait_job_exit(self, timeout: float = 180.0) -> int:
        try:
            code = self.job.wait(timeout)
        except subprocess.TimeoutExpired:
            self._kill_everything()
            raise AssertionError(f"secure-mirror run did not end within {timeout:.0f} s; see {self.cli_log}") from None
        self.exit_codes.append(code)
        self.supervised_restarts += self.supervised_restarts_so_far()
        return code

    def supervised_restarts_so_far(self) -> int:
        """How often ``--supervise`` has started the running job again (from its "restart N of M" sentences, or its
        ``restart`` lines with ``run --json``)."""
        text = self.cli_log.read_text(errors="replace")
        sentences = len(re.findall(r"restart \d+ of \d+", text))
        return max(sentences, sum(1 for line in json_lines_of(text) if line.get("kind") == "restart"))

    def run_lines(self) -> list[dict]:
        """The ``run --json`` lines the running (or last) job printed so far, in order (:func:`json_lines_of`)."""
        if getattr(self, "cli_log", None) is None or not self.cli_log.exists():
            return []
        return json_lines_of(self.cli_log.read_text(errors="replace"))

    def _fail_if_ended(self, what: str) -> None:
        if self.job is not None and self.job.poll() is not None:
            raise AssertionError(
                f"secure-mirror run ended (exit {self.job.returncode}) before {what}:\n" + self.log_tail()
            )

    def log_tail(self, lines: int = 40) -> str:
        text = []
        for path in (self.cli_log, self.run_dir / "job.log"):
            if path.exists():
                text.append(f"--- {path}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(text)

    def _kill_everything(self) -> None:
        """The CLI and its job (used only when something hangs or a test fails)."""
        driver = ControlFolder(self.run_dir).pid() if self.run_dir else None
        for target in ([driver] if driver is not None else []) + [self.job.pid]:
            try:
                os.killpg(os.getpgid(target), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        try:
            self.job.wait(30)
        except subprocess.TimeoutExpired:
            pass

    def duplicated_so_far(self) -> int:
        """Extra copies of records on the target right now."""
        on_target = self.sb.admin("target", count_sequences, self.target_topic)
        return sum(times - 1 for times in on_target.values() if times > 1)

    # -- the end
    def caught_up(self) -> bool:
        """The checkpoint has committed every record the source holds."""
        return self.caught_up_to(self.source_marks())

    def source_marks(self) -> dict:
        """The source topic's (low, high) watermarks per partition, now."""
        with inspection(self.profile) as clients:
            return clients.call("source", watermarks, [self.source_topic])

    def caught_up_to(self, marks: dict) -> bool:
        """The checkpoint has committed every record up to ``marks`` (:meth:`source_marks`): the job commits a batch
        after its records are on the target."""
        found = checkpoint.committed_offsets(self.profile.mirror.checkpoint_location)
        committed = {} if found is None else found[1]
        return all(committed.get(tp, -1) >= high for tp, (_low, high) in marks.items() if high > 0)

    def stop_producing(self) -> dict:
        """Stop the source's producers: what they sent, acknowledged and aborted, the transactional one's included."""
        produced = self.producer.stop()
        if self.transactions is None:
            return produced
        tx = self.transactions.stop()
        return {
            **produced,
            "acked": produced["acked"] + tx["acked"],
            "aborted": tx["aborted"],
            "aborted_transactions": tx.get("aborted_transactions"),
            "sent": produced["sent"] + tx["sent"],
            "errors": {**produced["errors"], **{f"tx:{k}": v for k, v in tx["errors"].items()}},
        }

    def finish(self, drain_timeout: float = 300.0) -> Outcome:
        """Stop producing; the running job catches up and is stopped with SIGTERM (or, when none runs, ``run
        --until-caught-up`` drains); then count. Records the figures in ``STATS``."""
        produced = self.stop_producing()
        if self.job is not None and self.job.poll() is None:
            wait_for(
                lambda: self._fail_if_ended("it caught up") or self.caught_up(),
                drain_timeout,
                "the running job to catch up",
                step=2.0,
            )
            code = self.stop_job()
            assert code == 0, f"stopping the job after it caught up ended with {code}:\n{self.log_tail()}"
        else:
            self.start_job(until_caught_up=True, _drain=True)
            code = self.wait_job_exit(drain_timeout)
            assert code == 0, f"run --until-caught-up ended with {code}:\n{self.log_tail()}"
        self.outcome = self._count(produced)
        STATS["cases"] += 1
        STATS["records_produced"] += self.outcome.produced
        STATS["records_lost"] += self.outcome.lost
        STATS["records_duplicated"] += self.outcome.duplicated
        STATS["restarts"] += self.outcome.restarts
        return self.outcome

    def _count(self, produced: dict) -> Outcome:
        on_target, acked, missing, duplicated, counted = self.count_target(produced)
        # verify lists every difference only when its sketch has room for them: size it from our own count
        cells = max(DEFAULT_CELLS, 3 * (duplicated + len(missing)) // self.partitions + 60)
        result = verify(self.profile, cells=cells)
        listed = all(c.listed for c in result.comparisons)
        assert listed, f"verify could not list the differences with {cells} cells:\n{result.text()}"
        return Outcome(
            produced=len(acked),
            lost=len(missing),
            duplicated=duplicated,
            restarts=self.restarts + self.supervised_restarts,
            sent=produced["sent"],
            verify_ok=result.ok,
            verify_missing=sum(c.missing for c in result.comparisons),
            verify_duplicated=sum(c.duplicated for c in result.comparisons),
            verify_extra=sum(c.extra for c in result.comparisons),
            exit_codes=list(self.exit_codes),
            lost_examples=missing[:10],
            producer_errors=produced["errors"],
            task_retries=task_retries(self.run_lines()),
            **counted,
        )

    def count_target(self, produced: dict) -> tuple[dict[int, int], list[int], list[int], int, dict]:
        """The independent count (read_committed, by the admins): seq -> copies on the target, what counts as
        produced, what is missing, the extra copies, and with a transactional producer the figures of
        :class:`Outcome` that need it (``source_positions`` and ``target_counts`` are kept for per-fault figures)."""
        on_target = self.sb.admin("target", count_sequences, self.target_topic)
        acked = produced["acked"]
        counted: dict = {}
        if self.transactions is not None:  # what the source holds, read read_committed, is what was produced
            self.source_positions = self.sb.admin("source", sequence_positions, self.source_topic)
            self.target_counts = on_target
            counted = {
                "on_target": sum(on_target.values()),
                "aborted_on_target": sum(1 for seq in produced["aborted"] if seq in on_target),
                "committed_not_on_source": sum(1 for seq in acked if seq not in self.source_positions),
                "aborted_transactions": produced.get("aborted_transactions"),
                "aborted_records": len(produced["aborted"]),
            }
            acked = sorted(set(acked) | set(self.source_positions))
        missing = sorted(seq for seq in set(acked) if seq not in on_target)
        duplicated = sum(times - 1 for times in on_target.values() if times > 1)
        return on_target, acked, missing, duplicated, counted


@contextmanager
def sandbox_of_its_own(tmp_path_factory, name: str, **options) -> Iterator[Sandbox]:
    """A sandbox for one module (``Sandbox.up``'s ``options``: brokers, ticket lifetimes, re-authentication), with
    the tests' quick Spark starts; taken down at the end."""
    started = time.monotonic()
    sb = Sandbox.up(tmp_path_factory.mktemp(name) / "sb", **options)
    print(f"\n{name}: the sandbox started in {time.monotonic() - started:.0f} s")
    try:
        with jvm_starts.quick_spark_starts(sb, lambda: tmp_path_factory.mktemp("jvm")):
            yield sb
    finally:
        sb.down()


def _with_local_dirs(hook: ProfileHook | None, folder: Path) -> ProfileHook:
    """Spark's scratch space inside the case's folder (a killed driver leaves it behind), then ``hook``."""

    def apply(data: dict) -> None:
        spark = data["mirror"].setdefault("spark", {})
        spark.setdefault("conf", {})["spark.local.dir"] = str(folder / "spark-local")
        if hook is not None:
            hook(data)

    return apply
