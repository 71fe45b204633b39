"""Issue 58 point 4: longer outages, each on its own, ridden through in place by jobs started WITHOUT ``--supervise``.

Long setting only (``SECURE_MIRROR_RELIABILITY=long``; the quick setting skips the module: a case takes 12 to 20
minutes). In each case an exactly_once and an at_least_once job (``secure-mirror run --json``, started once, no
``--supervise``) run at once, each over a topic of its own fed by a steady idempotent producer for the case's whole
life (``harness.MirrorUnderLoad``). Once both have committed batches with records, the fault comes, alone:

- every target broker down for ``OUTAGE`` seconds (the session's sandbox: one broker a side; stopped cleanly or
  killed -9, as the printed seed draws, then started again on the same ports with the same data);
- every source broker down for ``OUTAGE`` seconds (likewise);
- the KDC down for ``OUTAGE`` seconds across a re-login (a sandbox of this module's own; see below).

During the window, every ``PROBE`` seconds, the test connects to each port the fault closed: every attempt must be
refused (the fault happened), and both jobs must still be running. After it, each job must commit every record the
source held when the fault was over (the seconds it took are recorded); then the producers stop, the jobs catch up
and are stopped (SIGTERM: exit 0), and an independent read_committed count of every sequence number on each target
(and ``verify``) must find 0 lost, 0 duplicated in exactly_once (at_least_once's duplicates are counted and
reported), and 0 restarts: ``run`` started once and ended with exit 0. Duplicates are the target's copies of a
record beyond the source's copies of it: across a source outage the test's idempotent producer (librdkafka) has
written records to the source twice (4,368 of them in one run), which the mirror copies as they are; the harness's
own ``duplicated`` counts those too, and both figures are reported. A broker case also asserts that the job's
``--json`` printed ``waiting`` lines naming the side during the window (the ride-through's own account); where the
product has no ``waiting`` line yet (issue 58's change not in the checkout), that one assertion is skipped, after
every other passed, with that reason.

The KDC across a re-login. Its own sandbox (one broker a side) makes every GSSAPI connection on the brokers' client
listener authenticate again each ``REAUTH_MS`` (KIP-368) with the credentials its client holds by then, and each job
logs in as principals of its own whose tickets live ``LIFETIME`` seconds (MIT's ``maxlife``; everything else keeps
the realm's 10 hours). The test's producers log in once and keep their service tickets (:class:`ProducersLoggedInOnce`),
so that they write through the outage. Kafka's Java client logs in again from the keytab at 80 to 85% of its
ticket's life. The KDC
stops at ``first + LIFETIME - OUTAGE - MARGIN``, ``first`` being the earliest of the jobs' Kafka logins (the authtime
of the TGT their service tickets were asked with, in the KDC's log), so that, checked from that log:

- every ticket the jobs' clients hold stays valid for the whole outage (each login's authtime + ``LIFETIME`` is at
  or after the moment the KDC answers again): the KDC is away while the tickets are still valid;
- every client's re-login falls due inside the outage (authtime + 0.85 ``LIFETIME`` before its end) and fails there
  (the job's log says so: its KerberosLogin lines in the window, and the job's own "cannot reach the KDC");
- their tickets expire at most ``MARGIN`` seconds (plus the logins' spread) after the KDC is back: the jobs must log
  in again at the outage's end or right after.

What the case proves, asserted: the KDC's ports refused every connection in the window; both jobs kept running and
neither restarted; records reached the target during the outage before any re-login was due (ridden through on valid
tickets); after the outage each job's clients asked the KDC for service tickets of both brokers with a TGT of a
login made after the KDC was back; batches with new records were committed after every ticket of the logins before
the outage had expired and one more re-authentication period had passed (so over connections that authenticated
again after those tickets had ended); 0 lost, 0 duplicated in exactly_once. What it does not claim: that records
flowed through the whole outage. Kafka's client (kafka-clients 3.9.0) logs out before it logs in again, so a failed
re-login leaves it with no ticket at all ("No TGT found: will try again at ...") while its old ones were still
valid, and connections that must authenticate again fail until a re-login succeeds, at most a minute after the KDC
is back: the records committed before and after the first re-login fell due are recorded instead.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import random
import re
import socket
import subprocess
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from secure_mirror.run import checkpoint
from secure_mirror.sandbox.sink_jar import sink_conf
from secure_mirror.sandbox.waiting import wait_for
from tests.support import seeds

from .conftest import DETAILS, FIGURES, LONG
from .harness import MirrorUnderLoad, Outcome, count_sequences, sandbox_of_its_own

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.sandbox,
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(not LONG, reason="the long setting's (SECURE_MIRROR_RELIABILITY=long): 12-20 minutes a case"),
]

GUARANTEES = ("exactly_once", "at_least_once")
OUTAGE = 300.0  # seconds each fault lasts
PROBE = 5.0  # seconds between two connection attempts to the closed ports (and two looks at the jobs)
RATE = 100.0  # records/s of each job's producer
CATCH_UP = 900.0  # seconds a job may take to commit what the source held when the fault was over
LIFETIME = 540  # seconds the jobs' tickets live in the KDC case (the principals' maxlife)
MARGIN = 20  # seconds between the KDC's return and the expiry of the earliest login's tickets
RENEW_AT = (0.80, 0.85)  # Kafka's re-login: sasl.kerberos.ticket.renew.window.factor, plus its jitter
REAUTH_MS = 60_000  # connections.max.reauth.ms of the KDC case's GSSAPI connections


def _guarantee(guarantee: str, folder: Path, more=None):
    def apply(data: dict) -> None:
        data["mirror"].setdefault("delivery", {})["guarantee"] = guarantee
        data["mirror"]["spark"].setdefault("conf", {}).update(sink_conf(folder))
        if more is not None:
            more(data)

    return apply


# ---- what the test sees during the window --------------------------------------------------------------------
def probe(host: str, port: int) -> str:
    """``refused``, ``open`` or the error a TCP connection to ``host:port`` met."""
    try:
        with socket.create_connection((host, port), timeout=2.0):
            return "open"
    except ConnectionRefusedError:
        return "refused"
    except OSError as error:
        return errno.errorcode.get(error.errno or 0, type(error).__name__)


def mirrored(load: MirrorUnderLoad) -> int:
    """Records the job's checkpoint has committed (its batches' end offsets, summed): on the target by then."""
    found = checkpoint.committed_offsets(load.profile.mirror.checkpoint_location)
    return 0 if found is None else sum(found[1].values())


class Window:
    """The fault's window as the test saw it: every ``PROBE`` seconds the closed ports tried, the jobs looked at
    (each must still run) and what each had committed; the jobs' output between its start and its end."""

    def __init__(self, loads: dict[str, MirrorUnderLoad], ports: list[tuple[str, int]]):
        """Opened once every port refuses connections (a process killed -9 may take seconds to let go of them)."""
        self.loads, self.ports = loads, ports
        wait_for(lambda: all(probe(h, p) == "refused" for h, p in ports), 120, "the fault's ports to close", step=0.1)
        self.probes: Counter = Counter()
        self.samples: list[tuple[float, dict[str, int]]] = []  # (epoch seconds, guarantee -> mirrored)
        self.offsets = {
            g: {"cli": _size(load.cli_log), "job": _size(load.run_dir / "job.log")} for g, load in loads.items()
        }
        self.started = time.time()
        self.ended = self.started

    def watch(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while True:
            for g, load in self.loads.items():
                load._fail_if_ended(f"the fault's window was over ({g})")
            for host, port in self.ports:
                self.probes[probe(host, port)] += 1
            self.samples.append((time.time(), {g: mirrored(load) for g, load in self.loads.items()}))
            left = until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(PROBE, left))

    def close(self) -> None:
        self.ended = time.time()
        for g, load in self.loads.items():
            self.offsets[g] |= {"cli_end": _size(load.cli_log), "job_end": _size(load.run_dir / "job.log")}

    def lines(self, g: str) -> list[dict]:
        """The ``run --json`` lines job ``g`` printed during the window."""
        return run_lines(_slice(self.loads[g].cli_log, self.offsets[g]["cli"], self.offsets[g]["cli_end"]))

    def output(self, g: str) -> str:
        """What job ``g`` wrote during the window: its CLI's output and its Spark log."""
        load, at = self.loads[g], self.offsets[g]
        return _slice(load.cli_log, at["cli"], at["cli_end"]) + _slice(
            load.run_dir / "job.log", at["job"], at["job_end"]
        )

    def committed_between(self, g: str, start: float, end: float) -> int:
        """Records job ``g`` committed between two moments of the window (the samples nearest inside them)."""
        inside = [counts[g] for when, counts in self.samples if start <= when <= end]
        return inside[-1] - inside[0] if len(inside) > 1 else 0


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _slice(path: Path, start: int, end: int) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as f:
        f.seek(start)
        return f.read(max(0, end - start)).decode(errors="replace")


def run_lines(text: str) -> list[dict]:
    """The ``run --json`` lines in ``text`` (objects with a ``kind``; sentences and a line cut short left out)."""
    found = []
    for line in text.splitlines():
        try:
            value = json.loads(line) if line.startswith("{") else None
        except ValueError:
            continue
        if isinstance(value, dict) and "kind" in value:
            found.append(value)
    return found


def waiting_supported() -> bool:
    """Whether this checkout's ``run --json`` has ``waiting`` lines (issue 58's ride-through)."""
    return importlib.util.find_spec("secure_mirror.run.waiting") is not None


def waiting_lines(lines: list[dict], side: str | None = None) -> list[dict]:
    """The ``waiting`` lines among ``lines``; with ``side``, those naming it (``sides``, or a single ``side``)."""
    found = [line for line in lines if line.get("kind") == "waiting"]
    if side is None:
        return found
    return [line for line in found if side in (line.get("sides") or [line.get("side")])]


def ridden(lines: list[dict]) -> dict:
    """The outcome line's figures of the waits ridden through (``ridden``), or {} when it gave none."""
    outcomes = [line for line in lines if line.get("kind") == "outcome"]
    return dict(outcomes[-1].get("ridden") or {}) if outcomes else {}


# ---- the jobs ------------------------------------------------------------------------------------------------
def start_jobs(loads: dict[str, MirrorUnderLoad]) -> None:
    for load in loads.values():
        load.start_job(extra=("--json",))
    for load in loads.values():
        load.wait_for_batches(2, timeout=400)


def catch_up(loads: dict[str, MirrorUnderLoad], since: float) -> dict[str, float]:
    """Seconds from ``since`` (epoch) until each job had committed every record the source held when asked."""
    marks = {g: load.source_marks() for g, load in loads.items()}
    took = {}
    for g, load in loads.items():
        wait_for(
            lambda load=load, g=g: (
                load._fail_if_ended(f"it caught up after the fault ({g})") or load.caught_up_to(marks[g])
            ),
            CATCH_UP,
            f"the {g} job to commit what the source held after the fault",
            step=1.0,
        )
        took[g] = round(time.time() - since, 1)
    return took


@dataclass
class Finished:
    """A job's end: the harness's outcome, its ``run --json`` lines, and the copies of each sequence number on the
    source as well as on the target (the harness counts the target's alone)."""

    outcome: Outcome
    lines: list[dict]
    source_extra: int  # copies beyond the first on the SOURCE: written twice by the test's producer, not the mirror
    mirror_extra: int  # copies on the target beyond the source's copies of the same record: the mirror's duplicates

    @property
    def figures(self) -> str:
        return (
            f"duplicated by the mirror: {self.mirror_extra} (the harness's count of extra copies on the target, "
            f"{self.outcome.duplicated}, includes {self.source_extra} extra copies the source itself holds)"
        )


def finish(sb, loads: dict[str, MirrorUnderLoad]) -> dict[str, Finished]:
    """Each job drained, stopped and counted (``MirrorUnderLoad.finish``), then both topics counted again per
    sequence number, read_committed, while they exist."""
    out = {}
    for g, load in loads.items():
        outcome = load.finish()
        source = sb.admin("source", count_sequences, load.source_topic)
        target = sb.admin("target", count_sequences, load.target_topic)
        out[g] = Finished(
            outcome,
            run_lines(load.cli_log.read_text(errors="replace")),
            source_extra=sum(n - 1 for n in source.values() if n > 1),
            mirror_extra=sum(max(0, n - source.get(seq, 1)) for seq, n in target.items()),
        )
    return out


def report(case: str, g: str, done: Finished, fault_seconds: float, caught_up: float, observed: str) -> None:
    outcome = done.outcome
    line = (
        f"{case}, {g}: fault {fault_seconds:.0f} s, caught up {caught_up:.0f} s after it; {observed}; ridden: "
        f"{ridden(done.lines)}; {done.figures}; {outcome.text()}"
    )
    DETAILS.append(line)
    FIGURES.append(
        {
            "guarantee": g,
            "case": case,
            "fault_seconds": round(fault_seconds, 1),
            "caught_up_seconds": caught_up,
            "produced": outcome.produced,
            "on_target": outcome.on_target,
            "lost": outcome.lost,
            "duplicated": done.mirror_extra,  # as the three-broker rows count it: beyond the source's copies
            "restarts": outcome.restarts,
            "exit_codes": outcome.exit_codes,
            "observed": f"{observed}; ridden: {ridden(done.lines)}; source's own extra copies: {done.source_extra}",
        }
    )
    print(f"\n{line}")


def assert_ridden_through(g: str, done: Finished) -> None:
    outcome = done.outcome
    assert outcome.produced > 0, f"{g}: {outcome.text()}"
    assert outcome.lost == 0, f"{g}: acknowledged records missing on the target, e.g. {outcome.lost_examples}"
    assert outcome.restarts == 0 and outcome.exit_codes == [0], f"{g}: {outcome.text()}"
    assert outcome.verify_missing == 0 and outcome.verify_extra == 0, f"{g}: {outcome.text()}"
    if g == "exactly_once":  # verify: the target holds what the source holds, each record as often
        assert done.mirror_extra == 0 and outcome.verify_ok, f"{g}: {done.figures}; {outcome.text()}"
    else:
        assert outcome.verify_duplicated == done.mirror_extra, f"{g}: {done.figures}; {outcome.text()}"


# ---- every broker of a side down -----------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["target", "source"])
def test_every_broker_of_a_side_down_for_five_minutes_is_ridden_through(sandbox, tmp_path, side):
    seed = seeds.draw_seed(f"{side} brokers down")
    rng = random.Random(seed)
    hard = rng.random() < 0.5
    brokers = sandbox.brokers(side)
    case = f"every {side} broker {'killed -9' if hard else 'stopped'} for {OUTAGE:.0f} s (seed {seed})"
    finished: dict[str, Finished] = {}
    try:
        with ExitStack() as stack:
            loads = {}
            for g in GUARANTEES:
                folder = tmp_path / g
                folder.mkdir()
                hook = _guarantee(g, folder)
                loads[g] = stack.enter_context(
                    MirrorUnderLoad(sandbox, folder, rate=RATE, profile_hook=hook, name=f"{side[:3]}{g[:2]}")
                )
            start_jobs(loads)
            loads["exactly_once"].wait_for_batches(1)
            time.sleep(rng.uniform(0.0, 2.0))  # somewhere in a batch, or between two
            began = time.monotonic()
            for broker in brokers:
                sandbox.stop_broker(side, broker.node_id, hard=hard)
            window = Window(loads, [(b.host, b.port) for b in brokers])
            window.watch(OUTAGE)
            for broker in brokers:
                sandbox.start_broker(side, node_id=broker.node_id)
            window.close()
            fault_seconds = time.monotonic() - began
            caught = catch_up(loads, window.ended)
            finished = finish(sandbox, loads)
    finally:  # the session's sandbox serves the tests that come after
        for broker in brokers:
            if not sandbox.alive().get(sandbox.pid_key(side, broker.node_id)):
                sandbox.start_broker(side, node_id=broker.node_id)
    waits = {g: waiting_lines(window.lines(g), side) for g in GUARANTEES}
    for g, done in finished.items():
        observed = (
            f"connections to the {side}'s brokers in the window: {dict(window.probes)}; waiting lines naming the "
            f"{side} in it: {len(waits[g])}; committed in the window: "
            f"{window.committed_between(g, window.started, window.ended)}"
        )
        report(case, g, done, fault_seconds, caught[g], observed)
    assert window.probes["refused"] >= OUTAGE / PROBE and set(window.probes) == {"refused"}, dict(window.probes)
    for g, done in finished.items():
        assert_ridden_through(g, done)
    if not waiting_supported():
        pytest.skip("the waiting lines alone: this checkout's `run --json` has none yet (issue 58); all else passed")
    for g in GUARANTEES:
        assert waits[g], f"{g}: no waiting line naming the {side} in the window:\n{window.output(g)[-3000:]}"


# ---- the KDC away across a re-login --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reauth_sandbox(tmp_path_factory):
    """One broker a side whose GSSAPI client connections authenticate again every ``REAUTH_MS``."""
    options = {"reauth_ms": REAUTH_MS, "reauth_mechanisms": ("GSSAPI",)}
    with sandbox_of_its_own(tmp_path_factory, "kdc-outage", **options) as sb:
        yield sb


class ShortTickets:
    """A principal of the job's own on each side whose tickets live ``LIFETIME`` seconds (a keytab each), and what
    the KDC's log says of them: the TGTs their service tickets were asked with (the Kafka client's logins; the job's
    own login watch asks for none)."""

    def __init__(self, sb, folder: Path, tag: str):
        self.sb = sb
        self.principals = {
            side: f"ko{tag}{uuid.uuid4().hex[:6]}/mirror.{s.domain}@{s.realm}" for side, s in sb.sides.items()
        }
        self.keytabs = {side: folder / f"{side}-short.keytab" for side in self.principals}
        for side, principal in self.principals.items():
            sb.kdc().add_principal(principal, self.keytabs[side], maxlife=f"{LIFETIME} seconds")

    def hook(self, data: dict) -> None:
        for side, principal in self.principals.items():
            data[side]["sasl"] |= {"principal": principal, "keytab": str(self.keytabs[side])}

    def service_tickets(self, side: str) -> list[int]:
        """The authtime of the TGT each service ticket of ``side``'s broker issued to the job's principal there was
        asked with, in the KDC log's order."""
        asked = f" {self.principals[side]} for {self.sb.broker(side).principal}"
        found = []
        for line in self.sb.kdc().log.read_text(errors="replace").splitlines():
            if "TGS_REQ" in line and "ISSUE" in line and asked in line:
                if (m := re.search(r"authtime (\d+)", line)) is not None:
                    found.append(int(m.group(1)))
        return found

    def login(self, side: str) -> int:
        """The authtime of the newest TGT the client asked service tickets with: its current login."""
        return max(self.service_tickets(side))


class ProducersLoggedInOnce:
    """The sandbox as the harness sees it, except for the processes it spawns as a side's admin (the background
    producers: ``tests/support/spawned.py`` asks ``client_conf`` and ``identity_env``): each logs in once, into a
    credential cache of its own filled here with ``kinit`` (10-hour tickets), and never again (librdkafka's refresh
    off: ``sasl.kerberos.min.time.before.relogin`` 0). librdkafka's refresh runs ``kinit -k -t`` every minute, which
    replaces the cache and the service tickets in it; with the brokers re-authenticating every connection each
    minute, each re-authentication would then ask the KDC for a service ticket, and the test's producer, not the
    mirror, would stop with the KDC (the first run of this case produced nothing during the outage)."""

    def __init__(self, sb, folder: Path):
        self._sb, self._folder = sb, folder

    def __getattr__(self, name: str):
        return getattr(self._sb, name)

    def client_conf(self, side: str, who: str = "mirror", *, mechanism: str = "GSSAPI") -> dict:
        conf = self._sb.client_conf(side, who, mechanism=mechanism)
        return {**conf, "sasl.kerberos.min.time.before.relogin": 0} if who == "admin" else conf

    def identity_env(self, side: str, who: str) -> dict[str, str]:
        env = self._sb.identity_env(side, who)
        if who != "admin":
            return env
        env = {**env, "KRB5CCNAME": f"FILE:{self._folder / f'{side}-{who}-producer.ccache'}"}
        principal, keytab = self._sb.sides[side].admin_principal, self._sb.keytab(side, who)
        subprocess.run(["kinit", "-k", "-t", str(keytab), principal], env={**os.environ, **env}, check=True)
        return env


def kerberos_lines(text: str) -> list[str]:
    """Kafka's KerberosLogin warnings and errors, and the job's own lines about the KDC (no stack traces)."""
    pattern = re.compile(r"(WARN|ERROR).*KerberosLogin|the KDC")
    return [line[:300] for line in text.splitlines() if pattern.search(line)]


def test_the_kdc_away_across_a_re_login_is_ridden_through(reauth_sandbox, tmp_path):
    sb = reauth_sandbox
    kdc_ports = [("127.0.0.1", port) for port in [*sb.state["kdc_ports"], sb.state["corp_kdc_port"]]]
    with ExitStack() as stack:
        tickets, loads = {}, {}
        for g in GUARANTEES:
            folder = tmp_path / g
            folder.mkdir()
            tickets[g] = ShortTickets(sb, folder, g[:2])
            hook = _guarantee(g, folder, tickets[g].hook)
            producing = ProducersLoggedInOnce(sb, folder)
            loads[g] = stack.enter_context(
                MirrorUnderLoad(producing, folder, rate=RATE, profile_hook=hook, name=f"k{g[:2]}")
            )
        start_jobs(loads)
        logins = {(g, side): t.login(side) for g, t in tickets.items() for side in ("source", "target")}
        first = min(logins.values())
        stop_at = first + LIFETIME - OUTAGE - MARGIN
        print(
            f"\nkdc outage: the jobs' Kafka logins (s after the first): { {k: v - first for k, v in logins.items()} }"
        )
        assert max(logins.values()) + RENEW_AT[1] * LIFETIME <= stop_at + OUTAGE, (
            f"the jobs' logins are {max(logins.values()) - first} s apart: a re-login would fall due after the outage"
        )
        assert time.time() < stop_at, f"the jobs logged in {time.time() - first:.0f} s ago: too late for the design"
        time.sleep(stop_at - time.time())
        logins = {(g, side): t.login(side) for g, t in tickets.items() for side in ("source", "target")}  # again
        began = time.monotonic()
        sb.stop_kdc()
        try:
            window = Window(loads, kdc_ports)
            window.watch(OUTAGE)
        finally:
            sb.start_kdc()
        window.close()
        fault_seconds = time.monotonic() - began
        due = {k: (t + RENEW_AT[0] * LIFETIME, t + RENEW_AT[1] * LIFETIME) for k, t in logins.items()}
        expired = max(logins.values()) + LIFETIME
        caught = catch_up(loads, window.ended)
        # every ticket of the logins before the outage expired, and every connection authenticated again since
        wait_for(lambda: time.time() > expired + REAUTH_MS / 1000 + 5, LIFETIME, "the old tickets' expiry", step=2.0)
        for load in loads.values():
            load.wait_for_batches(2, timeout=300)
        # the KDC answered no one in the window: a TGT with a later authtime is of a login after it came back
        after = {
            (g, side): [a for a in t.service_tickets(side) if a > window.started]
            for g, t in tickets.items()
            for side in ("source", "target")
        }
        finished = finish(sb, loads)
    before_due = min(lo for lo, _hi in due.values())
    said = {g: kerberos_lines(window.output(g)) for g in GUARANTEES}
    case = f"the KDC down {OUTAGE:.0f} s across a re-login ({LIFETIME} s tickets, reauth {REAUTH_MS} ms)"
    for g, done in finished.items():
        observed = (
            f"connections to the KDC in the window: {dict(window.probes)}; logins (s before the KDC stopped): "
            f"{ {side: round(window.started - logins[(g, side)]) for side in ('source', 'target')} }; committed "
            f"before a re-login was due: {window.committed_between(g, window.started, before_due)}, after: "
            f"{window.committed_between(g, before_due, window.ended)}; waiting lines in the window: "
            f"{len(waiting_lines(window.lines(g)))}; KerberosLogin lines in it: "
            f"{sum('KerberosLogin' in line for line in said[g])}; service tickets with a TGT of a login after the "
            f"outage: { {side: len(after[(g, side)]) for side in ('source', 'target')} }"
        )
        report(case, g, done, fault_seconds, caught[g], observed)
        print("  " + "\n  ".join(said[g][-12:]))
    assert window.probes["refused"] >= 3 * OUTAGE / PROBE and set(window.probes) == {"refused"}, dict(window.probes)
    for key, login in logins.items():  # the design held: valid through the outage, a re-login due inside it
        assert login + LIFETIME >= window.ended, (key, login, window.ended)
        assert window.started <= due[key][0] and due[key][1] <= window.ended, (key, due[key], window.started)
    for g, done in finished.items():
        assert window.committed_between(g, window.started, before_due) > 0, f"{g}: nothing committed on valid tickets"
        assert any("KerberosLogin" in line for line in said[g]), f"{g}: no failed re-login in the window: {said[g]}"
        assert any("cannot reach the KDC" in line for line in said[g]), f"{g}: the job did not say: {said[g]}"
        for side in ("source", "target"):
            assert after[(g, side)], f"{g}: no service ticket of the {side} broker with a TGT from after the outage"
        assert_ridden_through(g, done)
