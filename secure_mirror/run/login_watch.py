"""Watching the job's Kerberos identities while it runs (in the job's JVM, through py4j).

Kafka's Java client treats "no valid Kerberos credentials" as retriable: when its ticket can no longer be renewed
(the keytab's key was rotated on the KDC, the principal was deleted) every new connection fails during
authentication and is retried for ever, and a mirror would look idle. So, every ``INTERVAL`` seconds, a thread
logs each GSSAPI identity in afresh from its keytab with the very login module of its ``sasl.jaas.config``:

- the KDC refuses the key (pre-authentication failed, unknown principal ...): :attr:`LoginWatch.refused` holds a
  sentence naming the principal and keytab, and the job stops (exit 5: restarting does not help);
- the KDC cannot be reached: one line on stderr when that starts and one when it answers again; mirroring goes
  on over the connections already open (new ones need the KDC);
- tickets that live no longer than Kafka's minimum re-login interval (60 s) are reported once: the Java client
  stops renewing such tickets.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass

from secure_mirror.render.job_model import JobSettings

INTERVAL = 60.0  # seconds between two checks of an identity: one AS exchange with its KDC
KAFKA_MIN_RELOGIN = 60.0  # sasl.kerberos.min.time.before.relogin's default
# What the JDK says when the KDC rejects the keytab's key or the principal; anything else (a KDC that does not
# answer: SocketTimeoutException, PortUnreachableException, ConnectException ...) is taken for an outage.
_REFUSED = (
    "Checksum failed",
    "Pre-authentication information was invalid",
    "Client not found in Kerberos database",
    "Integrity check on decrypted field failed",
    "Specified version of key is not available",
    "credentials have been revoked",
    "Unable to obtain password from user",
    "key has expired",
)


@dataclass(frozen=True)
class Identity:
    principal: str
    keytab: str
    jaas: str


def job_identities(settings: JobSettings, source_options: dict, sink_options: dict) -> list[Identity]:
    """The job's Kerberos identities, from ``job.json`` (render's data, not parsed back from JAAS), each with the
    ``sasl.jaas.config`` its side's Kafka clients log in with; one identity used by both sides is watched once."""
    jaas_of = {
        "source": source_options.get("kafka.sasl.jaas.config", ""),
        "target": sink_options.get("kafka.sasl.jaas.config", ""),
    }
    found: list[Identity] = []
    for entry in settings.identities:
        identity = Identity(entry.principal, entry.keytab, jaas_of[entry.side])
        if identity.jaas and all(i.jaas != identity.jaas for i in found):
            found.append(identity)
    return found


class LoginWatch:
    def __init__(self, jvm, identities: list[Identity], interval: float = INTERVAL, stream=None):
        self.jvm, self.identities, self.interval = jvm, identities, interval
        self.stream = stream or sys.stdout  # with the status lines, which the operator sees
        self.refused: str | None = None
        self.unreachable: set[str] = set()
        self.short_warned: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="secure-mirror-login-watch", daemon=True)
        if identities:
            self._thread.start()

    def close(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval) and self.refused is None:
            for identity in self.identities:
                if self._stop.is_set():
                    return
                try:
                    self.check(identity)
                except Exception:  # noqa: BLE001 - e.g. the JVM going away as the job stops: nothing to watch
                    return

    def check(self, identity: Identity) -> None:
        """Log ``identity`` in once; record what the KDC said (see the module doc)."""
        from py4j.protocol import Py4JJavaError

        try:
            lifetime = self._login(identity)
        except Py4JJavaError as error:
            reason = _reason(error)
            if not any(text in reason for text in _REFUSED):
                if identity.principal not in self.unreachable:
                    self.unreachable.add(identity.principal)
                    self._say(
                        f"cannot reach the KDC to log {identity.principal} in ({reason}); mirroring goes on "
                        "over the open connections, new connections fail until the KDC is back"
                    )
                return
            self.refused = (
                f"the KDC refused the login of {identity.principal} with the keytab {identity.keytab} "
                f"({reason}): its key was probably rotated or the principal removed; export the "
                f"current key (kadmin: ktadd -norandkey -k {identity.keytab} {identity.principal}) and "
                "start the job again"
            )
            return
        if identity.principal in self.unreachable:
            self.unreachable.discard(identity.principal)
            self._say(f"the KDC answers again: {identity.principal} logged in")
        if lifetime is not None and lifetime <= KAFKA_MIN_RELOGIN and identity.principal not in self.short_warned:
            self.short_warned.add(identity.principal)
            self._say(
                f"tickets of {identity.principal} live only {lifetime:.0f} s, not longer than Kafka's minimum "
                f"re-login interval ({KAFKA_MIN_RELOGIN:.0f} s): the Kafka client stops renewing them, and "
                "connections opened after they expire will fail; ask for a longer ticket lifetime"
            )

    def _login(self, identity: Identity) -> float | None:
        """A fresh login from the keytab; the ticket's lifetime in seconds."""
        jvm = self.jvm
        config = jvm.org.apache.kafka.common.security.JaasConfig("KafkaClient", identity.jaas)
        subject = jvm.javax.security.auth.Subject()
        context = jvm.javax.security.auth.login.LoginContext("KafkaClient", subject, None, config)
        context.login()
        try:
            tickets = subject.getPrivateCredentials(
                jvm.java.lang.Class.forName("javax.security.auth.kerberos.KerberosTicket")
            ).toArray()
            if len(tickets):
                ticket = tickets[0]
                return (ticket.getEndTime().getTime() - ticket.getStartTime().getTime()) / 1000
            return None
        finally:
            context.logout()

    def _say(self, text: str) -> None:
        self.stream.write(f"{time.strftime('%H:%M:%S')} secure-mirror job: {text}\n")
        self.stream.flush()


def _reason(error) -> str:
    """The Java exceptions of a py4j error, outermost first ("LoginException: Checksum failed; KrbException: ...")."""
    java = getattr(error, "java_exception", None)
    messages: list[str] = []
    while java is not None:
        message = (
            f"{java.getClass().getSimpleName()}: {java.getMessage()}"
            if java.getMessage()
            else java.getClass().getSimpleName()
        )
        if message not in messages:
            messages.append(message)
        java = java.getCause()
    return ("; ".join(messages) if messages else str(error).splitlines()[0])[:300]
