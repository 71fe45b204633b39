"""Issue 7 part 4: Kerberos trouble while mirroring, each case producing on the source while the job runs.

The source side logs in as a principal of the case's own whose tickets live 75 seconds (MIT's ``maxlife``; the
realm allows 10 hours), with the case's own ACLs, so the shared principals are never touched. Kafka's Java
client re-logs in from the keytab at about 80% of a ticket's life, but never sooner than 60 s after the last
login (``sasl.kerberos.min.time.before.relogin``): with tickets of 60 s or less its refresh thread gives up at
once ("NextRefresh ... is in the past: exiting refresh thread"), hence 75 s here.

- short tickets and a KDC outage, in one run: after the first ticket has expired the source broker restarts, so
  every connection must authenticate again with credentials the client got by logging in again; then the KDC
  is stopped for longer than a ticket lives, and the source broker restarts once more right after it is back.
  No record may be lost, ``run --supervise`` must keep running throughout and commit batches after each restart
  (a consumer that could not authenticate for 60 s fails the query, and the supervisor starts the job again),
  and the job must say when it cannot reach the KDC and when the KDC answers again.
- keytab rotated on the KDC (new key version) while the job's keytab file is stale: the job must end within a
  bounded time with exit 5 and a sentence naming the principal and the keytab (Kafka's client alone would retry
  such logins for ever and the mirror would look idle).

``SECURE_MIRROR_RELIABILITY=long`` runs the first case, with several ticket lifetimes before the outage and a longer
outage; CI runs the second only (the first's comment says why).
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest

from secure_mirror.run.login_watch import INTERVAL
from secure_mirror.sandbox import procs
from secure_mirror.sandbox.waiting import wait_for

from .conftest import DETAILS, LONG
from .harness import MirrorUnderLoad

pytestmark = [pytest.mark.reliability, pytest.mark.sandbox, pytest.mark.spark]
LIFETIME = 75  # seconds: maxlife of the case's principal
BEFORE_OUTAGE = (4 if LONG else 1) * LIFETIME + 40  # seconds mirrored before the first broker restart
OUTAGE = (2 if LONG else 1) * LIFETIME + 15  # seconds the KDC is down: longer than a ticket lives
RATE = 40.0  # records per second


class ShortLivedIdentity:
    """A source principal of the case's own, tickets living ``LIFETIME`` seconds; deleted afterwards."""

    def __init__(self, sandbox, folder: Path):
        self.sb = sandbox
        self.principal = f"mk{uuid.uuid4().hex[:8]}/mirror.source.test@SOURCE.TEST"
        self.keytab = folder / "short-lived.keytab"
        self.log_start = 0

    def __enter__(self) -> ShortLivedIdentity:
        self.sb.kdc().add_principal(self.principal, self.keytab, maxlife=f"{LIFETIME} seconds")
        return self

    def __exit__(self, *_exc) -> None:
        if not self.sb.alive().get("kdc"):
            self.sb.start_kdc()
        self.sb.kdc().delete_principal(self.principal)

    def hook(self, data: dict) -> None:
        data["source"]["sasl"] |= {"principal": self.principal, "keytab": str(self.keytab)}

    # the KDC's log: what the job asked for since mark()
    def mark(self) -> None:
        self.log_start = self.sb.kdc().log.stat().st_size

    def authtimes(self, what: str) -> list[int]:
        """When the TGT behind each ``what`` (AS_REQ, TGS_REQ) line was obtained (the KDC logs its authtime)."""
        return [int(m.group(1)) for line in self.kdc_lines(what) if (m := re.search(r"authtime (\d+)", line))]

    def kdc_lines(self, what: str) -> list[str]:
        text = procs.log_since(self.sb.kdc().log, self.log_start)
        return [line for line in text.splitlines() if what in line and f" {self.principal} for " in line]


def _job_log(load: MirrorUnderLoad) -> str:
    path = load.run_dir / "job.log"
    return path.read_text(errors="replace") if path.exists() else ""


def _kerberos_lines(text: str) -> list[str]:
    """What the job said about Kerberos: its own lines and Kafka's KerberosLogin warnings (no stack traces)."""
    pattern = re.compile(r"secure-mirror job: .*(KDC|login)|WARN KerberosLogin|ERROR KerberosLogin")
    return [line[:300] for line in text.splitlines() if pattern.search(line)]


# About 4.5 minutes, the module's most: the long setting's since CI neared its time limit. There,
# test_long_outages.py's KDC case is harder (both guarantees, unsupervised, the KDC away across a re-login with
# brokers re-authenticating every connection), and test_relogin.py runs three ticket lifetimes. CI keeps the keytab
# rotated on the KDC below; it no longer runs a KDC outage or a re-login.
@pytest.mark.slow
@pytest.mark.skipif(not LONG, reason="the long setting's (SECURE_MIRROR_RELIABILITY=long)")
def test_short_tickets_and_a_kdc_outage_lose_nothing(sandbox, tmp_path):
    with (
        ShortLivedIdentity(sandbox, tmp_path) as identity,
        MirrorUnderLoad(sandbox, tmp_path, rate=RATE, profile_hook=identity.hook, name="krb") as load,
    ):
        identity.mark()
        started = time.monotonic()  # the job logs in as it starts
        load.start_job(supervise=True)
        load.wait_for_batches(1, timeout=300)
        time.sleep(BEFORE_OUTAGE)  # the first ticket has expired: the client must have logged in again
        sandbox.restart_broker("source")  # every connection authenticates again, with the new credentials
        load.wait_for_batches(2, timeout=180)
        logins = identity.authtimes("AS_REQ")  # the client's, and the job's own checks (see run/login_watch.py)
        reconnected_with = identity.authtimes("TGS_REQ")  # the TGTs the client used for its connections

        before = load.committed_batch()
        sandbox.stop_kdc()
        try:
            deadline = time.monotonic() + OUTAGE
            while time.monotonic() < deadline:
                load._fail_if_ended("the KDC came back")
                time.sleep(2)
            during = load.committed_batch() - before
        finally:
            sandbox.start_kdc()
        sandbox.restart_broker("source")  # the tickets expired meanwhile: reconnecting needs the KDC
        load.wait_for_batches(2, timeout=240)
        ran_for = time.monotonic() - started
        wait_for(
            lambda: "the KDC answers again" in load.cli_log.read_text(errors="replace") + _job_log(load),
            INTERVAL + 60,
            "the job to say that the KDC answers again",
        )
        cli = load.cli_log.read_text(errors="replace") + _job_log(load)
        outcome = load.finish()

    print(
        f"\nkerberos: the job ran {ran_for:.0f} s ({ran_for / LIFETIME:.1f} ticket lifetimes); logins at the KDC "
        f"before the outage: {len(logins)}, service tickets asked with TGTs of "
        f"{sorted(set(reconnected_with))} (first login {min(logins)}); batches committed during the "
        f"{OUTAGE} s outage: {during}; {outcome.text()}"
    )
    print("kerberos lines of the job's output:\n  " + "\n  ".join(_kerberos_lines(cli)[-20:]))
    DETAILS.append(
        f"Kerberos: {LIFETIME} s tickets for {ran_for:.0f} s, then the KDC stopped for {OUTAGE} s "
        f"(source broker restarted after the first expiry and after the outage): {outcome.text()}"
    )
    # The connections made after the restart used a TGT newer than the one the job started with: Kafka's client
    # logged in again (the job's own checks log in with a Subject of their own, which no connection uses).
    assert reconnected_with and max(reconnected_with) > min(logins), (logins, reconnected_with)
    assert ran_for > 3 * LIFETIME
    assert "cannot reach the KDC to log " + identity.principal in cli, cli[-3000:]
    assert "the KDC answers again: " + identity.principal in cli, cli[-3000:]
    assert outcome.lost == 0, outcome.text()
    assert outcome.verify_missing == 0 and outcome.produced > RATE * ran_for / 3, outcome.text()


def test_a_keytab_rotated_on_the_kdc_fails_clearly(sandbox, tmp_path):
    with (
        ShortLivedIdentity(sandbox, tmp_path) as identity,
        MirrorUnderLoad(sandbox, tmp_path, rate=RATE, profile_hook=identity.hook, name="rot") as load,
    ):
        load.start_job()
        load.wait_for_batches(1, timeout=300)
        identity.mark()
        sandbox.kdc().export_keytab(identity.principal, tmp_path / "rotated.keytab")  # new kvno: ours is stale
        rotated = time.monotonic()
        code = load.wait_job_exit(timeout=INTERVAL + 120)
        took = time.monotonic() - rotated
        tried = identity.kdc_lines("AS_REQ")  # MIT answers (no pre-auth asked); the client cannot read the reply
        cli = load.cli_log.read_text(errors="replace")
        job_log = _job_log(load)
        load.job = None  # it ended: finish() is not called, the records stay on the source
        load.producer.stop()

    print(
        f"\nkerberos: with a stale keytab the job ended with exit {code} {took:.0f} s after the rotation; "
        f"logins tried at the KDC after the rotation: {len(tried)}"
    )
    print("kerberos lines of the job's output:\n  " + "\n  ".join(_kerberos_lines(cli + job_log)[-10:]))
    DETAILS.append(f"Kerberos: keytab rotated on the KDC while running: exit {code} {took:.0f} s later")
    assert tried, "the job never tried to log in with its stale keytab"
    assert code == 5, cli[-3000:]
    sentence = f"secure-mirror run: the KDC refused the login of {identity.principal} with the keytab {identity.keytab}"
    assert sentence in cli, cli[-3000:]
