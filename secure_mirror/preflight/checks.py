"""What each check means. The functions here run inside a side's worker process (see ``workers``) and talk
to the KDC, the brokers and the local files through the thin layers ``kerberos``, ``tls`` and ``kafka``.

A check whose prerequisite did not pass is reported as skipped, naming the prerequisite, so one cause
yields one failure: a stopped KDC fails ``<side>.kerberos.initial-ticket`` and skips what depends on it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from secure_mirror.kafka.acl import Acl, kafka_acls_command
from secure_mirror.preflight import api_versions, clock, kafka, kerberos, tls
from secure_mirror.preflight.authorizer import resource_matches
from secure_mirror.preflight.model import (
    FAIL,
    PASS,
    PROVE_WITH_AUDIT,
    SKIPPED,
    UNVERIFIED,
    WARN,
    Check,
)
from secure_mirror.profile.models import Cluster, GssapiSasl, Profile, too_few_partitions
from secure_mirror.profile.topics import classify
from secure_mirror.profile.warnings import ProfileWarning, profile_warnings, secret_file_warning
from secure_mirror.render import acls as acl_plans
from secure_mirror.render import librdkafka

OK = (PASS, WARN)


@dataclass
class SideChecks:
    """The checks of one side, in the order they ran."""

    side: str
    checks: list[Check] = field(default_factory=list)

    def add(self, what: str, status: str, finding: str, fix: str = "", **extra) -> Check:
        check = Check(f"{self.side}.{what}", status, finding, fix, **extra)
        self.checks.append(check)
        return check

    def status(self, what: str) -> str | None:
        return next((c.status for c in self.checks if c.id == f"{self.side}.{what}"), None)

    def blocked(self, what: str, *needs: str) -> bool:
        """Record ``what`` as skipped when one of ``needs`` ran and did not pass (checks that did not run are fine)."""
        failed = [n for n in needs if self.status(n) not in (None, *OK)]
        if failed:
            self.add(what, SKIPPED, f"skipped: needs {self.side}.{failed[0]} to pass")
        return bool(failed)


@dataclass
class SideFacts:
    """What a side's first phase hands back to the runner."""

    checks: list[Check]
    topics: dict[str, int] | None = None  # visible topics (source: the selected ones) -> partitions
    hosts: list[str] = field(default_factory=list)


def client_conf(cluster: Cluster, side: str) -> dict[str, str]:
    """The librdkafka configuration of the job's identity: exactly what the renderer produces."""
    return librdkafka.identity(cluster, side).conf


# ---- phase 1: files, Kerberos, TLS, connection, and (source) the topic selection ------------------------
def probe_side(profile: Profile, side: str, timeout: float, krb5_conf: str | None) -> SideFacts:
    cluster: Cluster = getattr(profile, side)
    run = SideChecks(side)
    weak_settings(run, profile)
    local_files(run, cluster, krb5_conf)
    creds = None
    if isinstance(cluster.sasl, GssapiSasl):
        kdc_clocks(run, profile, cluster, timeout)
        creds = kerberos_checks(run, cluster, side)
    if cluster.uses_tls:
        tls_checks(run, cluster, timeout)
    facts = SideFacts(run.checks)
    admin = connect(run, cluster, side, timeout)
    if admin is None:
        return facts
    facts.hosts = admin.hosts
    if creds is not None:
        broker_tickets(run, cluster, creds, admin.hosts)
    if side == "source":
        facts.topics = source_topics(run, profile, admin)
    return facts


def weak_settings(run: SideChecks, profile: Profile) -> None:
    """The profile's warnings for this side (``profile/warnings.py``: validate and render print the same), but its
    keytab's (``files.keytab``): one warning check, which ``--strict`` fails."""
    keytab = f"{run.side}.sasl.keytab"
    found = [w for w in profile_warnings(profile) if w.section == run.side and w.field != keytab]
    run.add("config.weak-settings", *_warned(found, "no setting of this side weakens the run"))


def profile_settings(profile: Profile) -> Check:
    """``profile.config.weak-settings``: the profile's warnings outside both sides (Spark, MirrorMaker 2, Hadoop,
    Kerberos, the isolation level)."""
    found = [w for w in profile_warnings(profile) if w.section not in ("source", "target")]
    return Check(
        "profile.config.weak-settings", *_warned(found, "no Spark, MirrorMaker 2 or Hadoop setting weakens the run")
    )


def _warned(found: list[ProfileWarning], passed: str) -> tuple[str, str, str]:
    """(status, finding, fix) of a check reporting ``found`` warnings, each finding named by its field."""
    if not found:
        return PASS, passed, ""
    return WARN, "; ".join(f"{w.field}: {w.finding}" for w in found), "; ".join(w.fix for w in found)


def local_files(run: SideChecks, cluster: Cluster, krb5_conf: str | None) -> None:
    if isinstance(cluster.sasl, GssapiSasl):
        keytab_file(run, cluster.sasl.keytab)
        krb5_conf_check(run, cluster.realm, krb5_conf)
    tls_settings = cluster.tls_settings
    if cluster.uses_tls and tls_settings.pem_ca is not None:
        try:
            count = tls.ca_certificates(tls_settings.pem_ca)
            run.add("files.ca", PASS, f"{tls_settings.pem_ca} holds {count} CA certificate(s)")
        except (OSError, ValueError) as exc:
            run.add(
                "files.ca",
                FAIL,
                f"{tls_settings.pem_ca} is not a PEM CA bundle ({exc})",
                f"point {run.side}.tls.ca at the PEM file of the CA that signed the brokers",
            )
    if tls_settings.mutual:
        client_certificate(run, cluster)


def keytab_file(run: SideChecks, keytab: Path) -> None:
    if not keytab.exists():
        run.add("files.keytab", FAIL, f"{keytab} does not exist", f"deploy the keytab or fix {run.side}.sasl.keytab")
    elif not os.access(keytab, os.R_OK):
        run.add(
            "files.keytab",
            FAIL,
            f"{keytab} is not readable by this user (uid {os.getuid()})",
            f"chown the keytab to the job's user and chmod 600 {keytab}",
        )
    elif warning := secret_file_warning(f"{run.side}.sasl.keytab", keytab, "keytab"):  # as validate warns
        run.add("files.keytab", WARN, warning.finding, warning.fix)
    else:
        run.add("files.keytab", PASS, f"{keytab} exists, is this user's own file and only its owner can read it")


def krb5_conf_check(run: SideChecks, realm: str, krb5_conf: str | None) -> None:
    path = krb5_conf or os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"
    try:
        text = Path(path).read_text()
    except OSError as exc:
        run.add(
            "kerberos.krb5-conf",
            FAIL,
            f"cannot read {path}: {exc.strerror}",
            "declare the realms under kerberos.realms in the profile, or fix kerberos.krb5_conf",
        )
        return
    realms_section = text.split("[realms]", 1)[-1].split("\n[", 1)[0] if "[realms]" in text else ""
    if f"{realm} =" in realms_section or f"{realm}=" in realms_section:
        run.add("kerberos.krb5-conf", PASS, f"{path} declares the realm {realm}")
    else:
        run.add(
            "kerberos.krb5-conf",
            FAIL,
            f"{path} does not declare the realm {realm} under [realms]",
            f"add {realm} with its kdc lines, or declare it under kerberos.realms in the profile",
        )


def client_certificate(run: SideChecks, cluster: Cluster) -> None:
    tls_settings = cluster.tls_settings
    password = tls_settings.key_password.resolve().encode() if tls_settings.key_password else None
    try:
        matches = tls.certificate_matches_key(tls_settings.certificate, tls_settings.key, password)
    except (OSError, ValueError, TypeError) as exc:
        run.add(
            "files.client-certificate",
            FAIL,
            f"cannot read the client certificate or key ({exc})",
            f"check {run.side}.tls.certificate and {run.side}.tls.key (PEM)",
        )
        return
    if matches and tls.pbes2_encrypted(tls_settings.key):
        run.add(
            "files.client-certificate",
            FAIL,
            f"{tls_settings.key} is encrypted with PBES2 (openssl's default), "
            "which Kafka's Java client on Java 17 cannot read (the Spark job would fail to connect)",
            f"re-encrypt it: openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -in {tls_settings.key} -out NEW.key",
        )
    elif matches:
        run.add("files.client-certificate", PASS, f"{tls_settings.certificate} matches its private key")
    else:
        run.add(
            "files.client-certificate",
            FAIL,
            f"{tls_settings.certificate} does not match {tls_settings.key}",
            "give the key the certificate was issued for",
        )


def kdc_clocks(run: SideChecks, profile: Profile, cluster: Cluster, timeout: float) -> None:
    """Each KDC's clock against ours (preflight/clock.py): Kafka's Java client and the brokers do not adjust to a
    KDC's time as MIT's tools do, so a skew beyond the allowed one fails their logins."""
    realm, principal = cluster.realm, cluster.sasl.principal
    declared = profile.kerberos.realms.get(realm) if profile.kerberos is not None else None
    if declared is None:
        run.add(
            "kerberos.clock",
            SKIPPED,
            f"the KDCs of {realm} come from krb5.conf, not the profile: their clocks were not measured",
            f"declare kerberos.realms.{realm}.kdcs in the profile to have them measured",
        )
        return
    limit = clock.DEFAULT_MAX_SKEW_S
    measured, failed = [], []
    for kdc in declared.kdcs:
        try:
            measured.append(clock.measure(kdc, principal, realm, timeout))
        except clock.ClockProbeError as exc:
            failed.append(str(exc))
    details = {"allowed_skew_s": limit, "kdcs": [vars(m) for m in measured], "not_measured": failed}
    if not measured:
        run.add(
            "kerberos.clock",
            UNVERIFIED,
            f"no KDC of {realm} told its time ({'; '.join(failed)}): the clock skew is not known",
            "check the KDCs answer on TCP or UDP from this machine",
            details=details,
        )
        return
    worst = max(measured, key=lambda m: abs(m.offset_s))
    words = (
        f"the KDC {worst.kdc} of {realm} is {abs(worst.offset_s):.1f} s "
        f"{'ahead of' if worst.offset_s > 0 else 'behind'} this machine (±{worst.uncertainty_s:.1f} s)"
    )
    fix = (
        "synchronise this machine, the KDCs and the brokers with NTP (chronyc tracking shows the offset); "
        f"Kerberos refuses clocks more than {limit:.0f} s apart"
    )
    if abs(worst.offset_s) - worst.uncertainty_s > limit:
        run.add(
            "kerberos.clock",
            FAIL,
            f"{words}: more than the {limit:.0f} s Kerberos allows, so Kafka's logins will be refused",
            fix,
            details=details,
        )
    elif abs(worst.offset_s) + worst.uncertainty_s > limit / 2:
        run.add("kerberos.clock", WARN, f"{words}: close to the {limit:.0f} s Kerberos allows", fix, details=details)
    else:
        run.add(
            "kerberos.clock",
            PASS,
            f"{words}, within the {limit:.0f} s Kerberos allows; "
            f"{len(measured)} of {len(declared.kdcs)} KDC(s) measured (brokers' clocks are not measured: "
            "Kafka's protocol does not show them)",
            details=details,
        )


def kerberos_checks(run: SideChecks, cluster: Cluster, side: str):
    sasl: GssapiSasl = cluster.sasl
    if run.blocked("kerberos.keytab", "files.keytab"):
        return None
    try:
        entries = [e for e in kerberos.read_keytab(sasl.keytab) if e.principal == sasl.principal]
    except (OSError, ValueError) as exc:
        run.add(
            "kerberos.keytab",
            FAIL,
            f"{sasl.keytab} is not a keytab ({exc})",
            "export the keytab again with kadmin ktadd",
        )
        return None
    if not entries:
        run.add(
            "kerberos.keytab",
            FAIL,
            f"{sasl.keytab} holds no key for {sasl.principal}",
            f"export the keys (kadmin: ktadd -k {sasl.keytab} {sasl.principal}) or fix {side}.sasl.principal",
        )
        return None
    kvnos = sorted({e.kvno for e in entries})
    enctypes = sorted({e.enctype for e in entries})
    details = {"kvnos": kvnos, "enctypes": enctypes}
    if set(enctypes) <= kerberos.WEAK_ENCTYPES:
        run.add(
            "kerberos.keytab",
            WARN,
            f"{sasl.principal}: only weak encryption types ({', '.join(enctypes)})",
            "re-key the principal with aes256-cts-hmac-sha1-96",
            details=details,
        )
    else:
        run.add(
            "kerberos.keytab",
            PASS,
            f"{sasl.principal}: key version(s) {', '.join(map(str, kvnos))}, {', '.join(enctypes)}",
            details=details,
        )
    return initial_ticket(run, cluster, side)


def initial_ticket(run: SideChecks, cluster: Cluster, side: str):
    sasl: GssapiSasl = cluster.sasl
    if run.blocked("kerberos.initial-ticket", "kerberos.krb5-conf"):
        return None
    try:
        creds = kerberos.initial_ticket(sasl.principal, sasl.keytab, f"secure-mirror-preflight-{side}")
    except kerberos.KerberosFailure as exc:
        run.add("kerberos.initial-ticket", FAIL, str(exc), exc.fix, details={"kind": exc.kind})
        return None
    lifetime = creds.lifetime
    run.add(
        "kerberos.initial-ticket",
        PASS,
        f"ticket for {sasl.principal} from the KDC of {sasl.realm}, "
        f"valid {lifetime // 3600}h{lifetime % 3600 // 60:02d}m (renewed from the keytab, not by renewal)",
        details={"lifetime_s": lifetime},
    )
    service_tickets(run, "kerberos.service-ticket", sasl, creds, [h for h, _ in cluster.brokers])
    return creds


def service_tickets(run: SideChecks, what: str, sasl: GssapiSasl, creds, hosts: list[str]) -> None:
    hosts = sorted(set(hosts))
    for host in hosts:
        try:
            kerberos.service_ticket(creds, sasl.service_name, host)
        except kerberos.KerberosFailure as exc:
            run.add(what, FAIL, str(exc), exc.fix, details={"kind": exc.kind, "host": host})
            return
    spns = ", ".join(f"{sasl.service_name}/{h}" for h in hosts)
    run.add(what, PASS, f"service tickets for {spns}")


def tls_checks(run: SideChecks, cluster: Cluster, timeout: float) -> None:
    if run.blocked("tls.certificate", "files.ca", "files.client-certificate"):
        return
    settings = cluster.tls_settings
    ctx = tls.context(
        settings.pem_ca,
        settings.certificate,
        settings.key,
        settings.hostname_verification,
        settings.key_password.resolve() if settings.key_password else None,
    )
    seen = []
    for host, port in cluster.brokers:
        try:
            tls.handshake(host, port, ctx, timeout)
        except tls.TlsFailure as exc:
            run.add("tls.certificate", FAIL, str(exc), exc.fix, details={"kind": exc.kind, "server": f"{host}:{port}"})
            return
        seen.append(f"{host}:{port}")
    run.add("tls.certificate", PASS, f"{', '.join(seen)}: certificate chains to the configured CA and names the host")


# ---- Kafka ---------------------------------------------------------------------------------------------
class Connected:
    def __init__(self, admin: kafka.Admin, cluster: dict):
        self.admin, self.cluster = admin, cluster
        self.hosts = sorted({host for host, _ in cluster["nodes"]})


def connect(run: SideChecks, cluster: Cluster, side: str, timeout: float) -> Connected | None:
    if run.blocked("kafka.connect", "kerberos.service-ticket", "tls.certificate", "kerberos.initial-ticket"):
        return None
    admin = kafka.Admin(client_conf(cluster, side), timeout)
    try:
        info = kafka.describe_cluster(admin)
    except Exception as exc:  # noqa: BLE001 - the reason is in librdkafka's error callback
        reason = admin.errors[-1] if admin.errors else str(exc)
        finding, fix = _connect_failure(reason, cluster, timeout)
        run.add("kafka.connect", FAIL, finding, fix, details={"librdkafka": admin.errors[-3:]})
        return None
    run.add(
        "kafka.connect",
        PASS,
        f"authenticated as {acl_plans.kafka_principal(cluster)} to cluster "
        f"{info['cluster_id']} ({len(info['nodes'])} broker(s))",
        details=info,
    )
    return Connected(admin, info)


def _connect_failure(reason: str, cluster: Cluster, timeout: float) -> tuple[str, str]:
    text = reason.lower()
    servers = ",".join(cluster.bootstrap_servers)
    if "authentication" in text or "sasl" in text:
        return (f"authentication failed: {reason}", "check the mechanism and credentials in the profile's sasl section")
    if "ssl" in text or "certificate" in text:
        return (f"TLS failed: {reason}", "check tls.ca and security_protocol against the broker's listener")
    return (
        f"no answer from {servers} within {timeout:g}s: {reason}",
        "check bootstrap_servers (host and port of the listener) and the firewall",
    )


def broker_tickets(run: SideChecks, cluster: Cluster, creds, hosts: list[str]) -> None:
    bootstrap = {h for h, _ in cluster.brokers}
    extra = [h for h in hosts if h not in bootstrap]
    if not extra:
        run.add(
            "kerberos.broker-tickets",
            PASS,
            f"the cluster's brokers ({', '.join(hosts)}) are the bootstrap servers already checked",
        )
        return
    service_tickets(run, "kerberos.broker-tickets", cluster.sasl, creds, extra)


# ---- ACL suggestions -------------------------------------------------------------------------------------
def suggestion(plan, operation: str, resource_type: str, name: str) -> Acl:
    """The ACL the rendered plan would grant for this need, else a LITERAL one for exactly this resource."""
    for binding in plan.bindings:
        if binding.operation == operation and resource_matches(binding, resource_type, name):
            return binding
    return Acl(principal=plan.principal, operation=operation, resource_type=resource_type, resource_name=name)


def missing(
    run: SideChecks,
    what: str,
    plan,
    cluster: Cluster,
    operation: str,
    resource_type: str,
    names: list[str],
    finding: str,
) -> Check:
    acls_needed = []
    for name in names:
        entry = suggestion(plan, operation, resource_type, name)
        if entry not in acls_needed:
            acls_needed.append(entry)
    bootstrap = cluster.first_broker
    commands = [kafka_acls_command(a, bootstrap) for a in acls_needed]
    more = f" (+{len(commands) - 1} more)" if len(commands) > 1 else ""
    fix = (
        f"grant {operation} to {plan.principal}: {commands[0]}"
        + more
        + "; if that ALLOW already exists a DENY overrides it: run pre-flight --as-admin to name it"
    )
    return run.add(what, FAIL, finding, fix, acls=acls_needed, commands=commands, details={"resources": names[:100]})


def _listed(names: list[str], limit: int = 5) -> str:
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


# ---- source topics ---------------------------------------------------------------------------------------
def source_topics(run: SideChecks, profile: Profile, conn: Connected) -> dict[str, int] | None:
    selection = profile.selection()
    visible = kafka.list_topics(conn.admin)
    selected = selection.select(list(visible))
    details = {"subscribe_pattern": selection.java_pattern(), "count": len(selected), "topics": selected[:100]}
    if not selected:
        run.add(
            "topics.selection",
            FAIL,
            f"mirror.topics selects none of the {len(visible)} topic(s) "
            f"{acl_plans.kafka_principal(profile.source)} can see (subscribePattern {selection.java_pattern()})",
            "fix mirror.topics.include/exclude, or grant DESCRIBE on the topics if they exist but are hidden "
            "(run pre-flight --as-admin to see every topic)",
            details=details,
        )
        return {}
    run.add("topics.selection", PASS, f"{len(selected)} topic(s) selected: {_listed(selected)}", details=details)
    plan = acl_plans.source_acls(profile)
    hidden_literals(run, profile, conn, plan, set(visible))
    described = kafka.describe_topics(conn.admin, selected)
    no_describe = [t for t in selected if "error" in described[t]]
    readable, no_read, unanswered, how = _read_answers(conn, profile, selected, described)
    if no_describe:
        missing(
            run,
            "acl.topic-describe",
            plan,
            profile.source,
            "DESCRIBE",
            "TOPIC",
            no_describe,
            f"{plan.principal} may not DESCRIBE {len(no_describe)} selected topic(s): {_listed(no_describe)}",
        )
    else:
        run.add("acl.topic-describe", PASS, f"{plan.principal} may DESCRIBE all {len(selected)} selected topic(s)")
    if no_read:
        missing(
            run,
            "acl.topic-read",
            plan,
            profile.source,
            "READ",
            "TOPIC",
            no_read,
            f"{plan.principal} may not READ {len(no_read)} of {len(selected)} topic(s): {_listed(no_read)}{how}",
        )
    elif unanswered:
        run.add(
            "acl.topic-read",
            UNVERIFIED,
            f"the brokers did not answer a fetch of {_listed(unanswered)}{how}: READ is not known",
            PROVE_WITH_AUDIT,
            proven_by="source.audit.topic-read",
            details={"resources": unanswered[:100]},
        )
    elif not no_describe:
        run.add("acl.topic-read", PASS, f"{plan.principal} may READ all {len(selected)} selected topic(s){how}")
    else:
        run.add("acl.topic-read", SKIPPED, "skipped for topics without DESCRIBE; READ holds on the others")
    group_read(run, profile, conn, plan)
    return {t: described[t].get("partitions", visible[t]) for t in selected}


OLD_BROKER = (
    " (asked by fetching at the end of each topic's first partition, no record kept: the brokers, "
    "older than Kafka 2.3, report no authorized operations)"
)


def _read_answers(conn: Connected, profile: Profile, selected: list[str], described: dict):
    """(readable, not readable, unanswered, how it was asked) for the selected topics the identity may describe.
    Brokers before Kafka 2.3 report no authorized operations: READ is then asked with a fetch at the end of each
    topic (as strong an answer: the broker authorizes a real Fetch)."""
    visible = [t for t in selected if "error" not in described[t]]
    unreported = [t for t in visible if described[t]["operations"] is None]
    fetched = kafka.fetch_probe(conn.admin, unreported, spark_group_name(profile)) if unreported else {}
    readable = [
        t for t in visible if (fetched.get(t) is None if t in fetched else "READ" in described[t]["operations"])
    ]
    no_read = [
        t
        for t in visible
        if t not in readable and fetched.get(t, "TOPIC_AUTHORIZATION_FAILED") == "TOPIC_AUTHORIZATION_FAILED"
    ]
    unanswered = [t for t in visible if t not in readable and t not in no_read]
    return readable, no_read, unanswered, OLD_BROKER if unreported else ""


def spark_group_name(profile: Profile) -> str:
    """A group id shaped like those Spark's Kafka source uses (``<groupIdPrefix>-<random UUID>-<n>-driver-0``): an
    ACL that allows it allows the real ones, whose UUID is new at every start (a LITERAL grant cannot)."""
    import uuid

    return f"{profile.group_prefix}-{uuid.uuid4()}-{abs(hash(profile.mirror.checkpoint_location)) % 10**9}-driver-0"


def hidden_literals(run: SideChecks, profile: Profile, conn: Connected, plan, visible: set[str]) -> None:
    """A topic the include names literally but the identity cannot see would be left out without a word: ask."""
    selection = profile.selection()
    named = [r.value for r in map(classify, selection.include) if r.kind == "literal" and r.value not in visible]
    named = [name for name in named if selection.matches(name)]
    if not named:
        return
    answers = kafka.describe_topics(conn.admin, named)
    hidden = sorted(name for name in named if answers[name].get("error") == "TOPIC_AUTHORIZATION_FAILED")
    absent = sorted(name for name in named if name not in hidden)
    if hidden:
        missing(
            run,
            "acl.topic-describe-named",
            plan,
            profile.source,
            "DESCRIBE",
            "TOPIC",
            hidden,
            f"mirror.topics names {_listed(hidden)}, which {plan.principal} may not DESCRIBE: it would not be "
            "mirrored, silently",
        )
    elif absent:
        run.add(
            "acl.topic-describe-named",
            WARN,
            f"mirror.topics names {_listed(absent)}, which does not exist on "
            "the source (yet); it is mirrored once it exists",
            "create the topic, or fix mirror.topics.include",
        )


def group_read(run: SideChecks, profile: Profile, conn: Connected, plan) -> None:
    group = spark_group_name(profile)
    answer = kafka.describe_group(conn.admin, group)
    if "error" not in answer and answer["operations"] is None:  # a broker before Kafka 2.3: join the group
        join_group(run, profile, conn, plan, group)
        return
    if "READ" in (answer.get("operations") or []):
        run.add("acl.group-read", PASS, f"{plan.principal} may READ consumer groups named {profile.group_prefix}*")
    elif answer.get("error") in (None, "GROUP_AUTHORIZATION_FAILED"):
        missing(
            run,
            "acl.group-read",
            plan,
            profile.source,
            "READ",
            "GROUP",
            [group],
            f"{plan.principal} may not READ the consumer groups Spark will use ({profile.group_prefix}*)",
        )
    else:
        run.add(
            "acl.group-read",
            WARN,
            f"could not check the consumer group {group}: {answer['error']}",
            "run pre-flight again; the group coordinator was not ready",
        )


def join_group(run: SideChecks, profile: Profile, conn: Connected, plan, group: str) -> None:
    topics = sorted(kafka.list_topics(conn.admin))
    selected = profile.selection().select(topics)
    if not selected:
        run.add("acl.group-read", SKIPPED, "skipped: no selected topic to join a consumer group for")
        return
    how = (
        f" (asked by joining {group} for {selected[0]} and leaving it: the brokers, older than Kafka 2.3, report "
        "no authorized operations)"
    )
    code = kafka.join_probe(conn.admin, group, selected[0])
    if code is None:
        run.add("acl.group-read", PASS, f"{plan.principal} may READ consumer groups named {profile.group_prefix}*{how}")
    elif code == "GROUP_AUTHORIZATION_FAILED":
        missing(
            run,
            "acl.group-read",
            plan,
            profile.source,
            "READ",
            "GROUP",
            [group],
            f"{plan.principal} may not READ the consumer groups Spark will use ({profile.group_prefix}*){how}",
        )
    else:
        run.add(
            "acl.group-read",
            UNVERIFIED,
            f"joining {group} got no answer{how}: READ on the group is not known",
            PROVE_WITH_AUDIT,
            proven_by="source.audit.group-read",
        )


# ---- phase 2, target: the renamed topics ------------------------------------------------------------------
def target_side(profile: Profile, timeout: float, source_topics: dict[str, int]) -> list[Check]:
    run = SideChecks("target")
    admin = kafka.Admin(client_conf(profile.target, "target"), timeout)
    plan = acl_plans.target_acls(profile)
    names = {profile.target_topic(t): p for t, p in source_topics.items()}
    described = kafka.describe_topics(admin, list(names))
    unknown = {t: names[t] for t, d in described.items() if "error" in d}
    created = kafka.validate_create(admin, unknown)
    exists = {t: d for t, d in described.items() if "error" not in d}
    exists_hidden = [t for t, code in created.items() if code == "TOPIC_ALREADY_EXISTS"]
    to_create = [t for t, code in created.items() if code != "TOPIC_ALREADY_EXISTS"]
    hidden = exists_hidden + [t for t in to_create if described[t]["error"] == "TOPIC_AUTHORIZATION_FAILED"]
    partitions(run, profile, exists, names, to_create)
    if hidden:
        missing(
            run,
            "acl.topic-describe",
            plan,
            profile.target,
            "DESCRIBE",
            "TOPIC",
            sorted(hidden),
            f"{plan.principal} may not DESCRIBE {len(hidden)} target topic(s): {_listed(sorted(hidden))}",
        )
    else:
        run.add("acl.topic-describe", PASS, f"{plan.principal} may DESCRIBE all {len(names)} target topic(s)")
    no_write = sorted(t for t, d in exists.items() if d["operations"] is not None and "WRITE" not in d["operations"])
    unasked = sorted(t for t, d in exists.items() if d["operations"] is None)  # brokers before Kafka 2.3
    if no_write:
        missing(
            run,
            "acl.topic-write",
            plan,
            profile.target,
            "WRITE",
            "TOPIC",
            no_write,
            f"{plan.principal} may not WRITE {len(no_write)} of {len(exists)} existing target topic(s): "
            f"{_listed(no_write)}",
        )
    elif unasked:  # writing is the only other way to ask, and pre-flight writes nothing
        run.add(
            "acl.topic-write",
            UNVERIFIED,
            f"the brokers, older than Kafka 2.3, report no authorized operations: "
            f"WRITE on {len(unasked)} existing target topic(s) ({_listed(unasked)}) cannot be asked without "
            "writing" + (f", nor on the {len(to_create)} still to create" if to_create else ""),
            PROVE_WITH_AUDIT,
            proven_by="target.audit.topic-write",
            details={"resources": (unasked + sorted(to_create))[:100]},
        )
    elif to_create:  # a broker answers for topics that exist only: WRITE on the others is not proven
        existing = f"WRITE holds on the {len(exists)} existing one(s); " if exists else ""
        run.add(
            "acl.topic-write",
            UNVERIFIED,
            f"{existing}WRITE on the {len(to_create)} target topic(s) still to "
            f"create ({_listed(sorted(to_create))}) cannot be asked before they exist",
            PROVE_WITH_AUDIT,
            proven_by="target.audit.topic-write",
            details={"resources": sorted(to_create)[:100]},
        )
    else:
        run.add("acl.topic-write", PASS, f"{plan.principal} may WRITE all {len(exists)} existing target topic(s)")
    no_create = sorted(t for t in to_create if created[t] == "TOPIC_AUTHORIZATION_FAILED")
    other = sorted(t for t in to_create if created[t] not in (None, "TOPIC_AUTHORIZATION_FAILED"))
    if no_create:
        missing(
            run,
            "acl.topic-create",
            plan,
            profile.target,
            "CREATE",
            "TOPIC",
            no_create,
            f"{plan.principal} may not CREATE {len(no_create)} missing target topic(s): {_listed(no_create)}",
        )
    elif other:
        run.add(
            "acl.topic-create",
            FAIL,
            f"the broker would refuse to create {_listed(other)}: {created[other[0]]}",
            "create the topics yourself, or fix the broker's topic policy",
        )
    elif to_create:
        run.add(
            "acl.topic-create",
            PASS,
            f"{plan.principal} may CREATE the {len(to_create)} missing target topic(s) "
            f"({_listed(sorted(to_create))}); checked with validate_only, nothing was created",
        )
    else:
        run.add("acl.topic-create", PASS, "every target topic exists; nothing to create")
    idempotent_write(run, profile, admin, timeout)
    transactions(run, profile, admin)
    return run.checks


def transactions(run: SideChecks, profile: Profile, admin: kafka.Admin) -> None:
    """exactly_once: the sink's transactional producers need WRITE on the ids under ``Profile.transactional_prefix``
    (asked by registering one such id; the audit checks the grants themselves)."""
    if not profile.mirror.delivery.exactly_once:
        return
    plan, prefix = acl_plans.target_acls(profile), profile.transactional_prefix
    probe = f"{prefix}preflight"
    how = f" (asked by registering the transactional id {probe}, which writes no record)"
    code = kafka.transaction_probe(admin, probe)
    if code is None:
        run.add("acl.transactional-id", PASS, f"{plan.principal} may use the transactional ids {prefix}*{how}")
    elif code == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED":
        missing(
            run,
            "acl.transactional-id",
            plan,
            profile.target,
            "WRITE",
            "TRANSACTIONAL_ID",
            [probe],
            f"{plan.principal} may not WRITE the transactional ids {prefix}* that exactly_once needs{how}",
        )
    else:
        run.add(
            "acl.transactional-id",
            UNVERIFIED,
            f"registering the transactional id {probe} got {code}: whether "
            f"{plan.principal} may use the ids {prefix}* is not known",
            PROVE_WITH_AUDIT,
            proven_by="target.audit.transactional_id-write",
        )


def partitions(run: SideChecks, profile: Profile, exists: dict, names: dict[str, int], to_create: list[str]) -> None:
    differ = sorted(t for t, d in exists.items() if d["partitions"] != names[t])
    fewer = [t for t in differ if too_few_partitions(profile.mirror.keep_partition, names[t], exists[t]["partitions"])]
    if fewer:  # the job would write to partitions that do not exist
        sample = ", ".join(f"{t} ({exists[t]['partitions']} vs {names[t]})" for t in fewer[:5])
        run.add(
            "topics.partitions",
            FAIL,
            f"mirror.keep_partition is true but {len(fewer)} target topic(s) have "
            f"fewer partitions than their source: {sample}",
            "add partitions on the target (kafka-topics --alter --partitions N), or set mirror.keep_partition: auto",
        )
    elif differ:
        sample = ", ".join(f"{t} ({exists[t]['partitions']} vs {names[t]})" for t in differ[:5])
        run.add(
            "topics.partitions",
            WARN,
            f"{len(differ)} target topic(s) have a partition count other than their source's: {sample}",
            "add partitions on the target (kafka-topics --alter --partitions N) if records must keep their partition",
        )
    else:
        run.add(
            "topics.partitions",
            PASS,
            f"{len(exists)} existing target topic(s) match their source's partition count; {len(to_create)} to create",
        )


def idempotent_write(run: SideChecks, profile: Profile, admin: kafka.Admin, timeout: float) -> None:
    """Since Kafka 2.8 (KIP-679) WRITE on a topic allows the idempotent producer; before, it needs IDEMPOTENT_WRITE
    on the cluster. The line comes from the API versions the first broker offers."""
    if not profile.mirror.delivery.enable_idempotence:
        return
    if run.status("acl.topic-write") == FAIL:  # one cause, one failure (unverified WRITE does not block this)
        run.add("acl.idempotent-write", SKIPPED, "skipped: needs target.acl.topic-write to pass")
        return
    cluster, plan = profile.target, acl_plans.target_acls(profile)
    try:
        apis = broker_apis(cluster, timeout)
    except api_versions.ApiVersionsError as exc:
        run.add(
            "acl.idempotent-write",
            UNVERIFIED,
            f"the brokers' Kafka line is not known ({exc}): whether the "
            "idempotent producer needs IDEMPOTENT_WRITE on the cluster is not known",
            PROVE_WITH_AUDIT,
            proven_by="target.audit.cluster-idempotent-write",
        )
        return
    if apis.write_allows_idempotence:
        run.add(
            "acl.idempotent-write",
            PASS,
            f"the brokers run {apis.line} (they offer DescribeCluster), where "
            "WRITE on the target topics allows the idempotent producer (KIP-679); no IDEMPOTENT_WRITE needed",
        )
        return
    grant = Acl(
        principal=plan.principal, operation="IDEMPOTENT_WRITE", resource_type="CLUSTER", resource_name="kafka-cluster"
    )
    operations = kafka.describe_cluster(admin)["operations"]
    if operations is None:
        run.add(
            "acl.idempotent-write",
            UNVERIFIED,
            f"the brokers run {apis.line}: the idempotent producer needs "
            "IDEMPOTENT_WRITE on the cluster, and such brokers do not report whether it is granted",
            f"grant it ({kafka_acls_command(grant, cluster.first_broker)}), then {PROVE_WITH_AUDIT}",
            acls=[grant],
            commands=[kafka_acls_command(grant, cluster.first_broker)],
            proven_by="target.audit.cluster-idempotent-write",
        )
    elif "IDEMPOTENT_WRITE" in operations or "ALL" in operations:
        run.add(
            "acl.idempotent-write",
            PASS,
            f"the brokers run {apis.line}, where the idempotent producer needs "
            f"IDEMPOTENT_WRITE on the cluster: {plan.principal} has it",
        )
    else:
        missing(
            run,
            "acl.idempotent-write",
            plan,
            cluster,
            "IDEMPOTENT_WRITE",
            "CLUSTER",
            ["kafka-cluster"],
            f"the brokers run {apis.line}, where the idempotent producer needs IDEMPOTENT_WRITE on the cluster, "
            f"which {plan.principal} lacks",
        )


def broker_apis(cluster: Cluster, timeout: float) -> api_versions.BrokerApis:
    """The API versions of the cluster's first broker (asked without credentials, over TLS when it uses TLS)."""
    host, port = cluster.brokers[0]
    ctx = None
    if cluster.uses_tls:
        settings = cluster.tls_settings
        ctx = tls.context(
            settings.pem_ca,
            settings.certificate,
            settings.key,
            settings.hostname_verification,
            settings.key_password.resolve() if settings.key_password else None,
        )
    return api_versions.ask(host, port, ctx, timeout)
