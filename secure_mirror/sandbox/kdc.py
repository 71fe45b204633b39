"""A throwaway MIT Kerberos KDC serving several realms from one ``krb5kdc`` process.

In the manner of k5test: everything lives in one folder, the KDC's environment is handed out as a dict
(``env``) and never written into this process's own ``os.environ``.
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from secure_mirror.errors import BadInputError, EnvironmentNotReady
from secure_mirror.sandbox import procs

KDC_BINARIES = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit", "klist")
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
# A corporate realm both cluster realms trust (one-way, krbtgt/<side realm>@CORP.TEST): the mirror identity of
# profile-corp.yaml lives there, and each side's brokers map it by this rule before their DEFAULT.
CORP_REALM, CORP_DOMAIN = "CORP.TEST", "corp.test"
CORP_MIRROR = f"mirror@{CORP_REALM}"
CORP_RULES = ("RULE:[1:$1@$0](.*@CORP\\.TEST)s/@.*//", "DEFAULT")


def find_binary(name: str) -> str:
    found = shutil.which(name) or next((f"{d}/{name}" for d in SBIN if Path(f"{d}/{name}").exists()), None)
    if not found:
        raise EnvironmentNotReady(
            f"the MIT Kerberos program {name} is missing; run scripts/setup (Debian: krb5-kdc, krb5-user)"
        )
    return found


# A Kerberos duration as kdc.conf reads it: 10h, 5m, 1d12h, 36000 (seconds) or 10:00[:00].
KRB5_DURATION = re.compile(r"^(?:(?:\d{1,6}[dhms])+|\d{1,9}|\d{1,4}:\d{2}(?::\d{2})?)$")


@dataclass
class SandboxRealm:
    """A realm the sandbox's KDC serves (not the profile's ``kerberos.realms`` entry): its port and domains."""

    name: str
    port: int
    domains: list[str]


@dataclass
class KDC:
    base: Path
    realms: list[SandboxRealm]
    max_life: str = "10h"
    max_renewable_life: str = "7d"
    pid: int | None = None
    launch_env: dict[str, str] = field(default_factory=dict)  # added for krb5kdc only (e.g. libfaketime in tests)
    _proc: subprocess.Popen | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_life", "max_renewable_life"):  # written into kdc.conf as they are
            if not KRB5_DURATION.match(getattr(self, name)):
                raise BadInputError(f"{getattr(self, name)[:40]!r} is not a Kerberos duration such as 5m, 10h or 1d12h")

    @property
    def krb5_conf(self) -> Path:
        return self.base / "krb5.conf"

    @property
    def log(self) -> Path:
        return self.base / "kdc.log"

    @property
    def env(self) -> dict[str, str]:
        """The environment for MIT tools run against this KDC (never applied to our own process)."""
        return {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
            "KRB5_CONFIG": str(self.krb5_conf),
            "KRB5_KDC_PROFILE": str(self.base / "kdc.conf"),
            "KRB5CCNAME": f"FILE:{self.base}/kdc-tools.ccache",
        }

    def create(self) -> None:
        """Write kdc.conf and krb5.conf and create one database per realm."""
        for name in KDC_BINARIES:
            find_binary(name)
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.base / "kdc.conf").write_text(self.kdc_conf())
        self.write_krb5_conf(self.krb5_conf)
        (self.base / "kadm5.acl").write_text("")
        for realm in self.realms:
            (self.base / realm.name).mkdir(exist_ok=True, mode=0o700)
            # A random master password for a throwaway database, on stdin (kdb5_util asks twice), not in argv.
            password = secrets.token_hex(16)
            self._run(find_binary("kdb5_util"), "-r", realm.name, "create", "-s", stdin=f"{password}\n{password}\n")

    def write_krb5_conf(self, path: Path, *, default_realm: str | None = None) -> None:
        """A client krb5.conf naming every realm of this KDC, ``default_realm`` (the first realm unless given) first."""
        path.write_text(krb5_conf(self.realms, default_realm=default_realm or self.realms[0].name))

    def kdc_conf(self) -> str:
        blocks = []
        for r in self.realms:
            d = self.base / r.name
            blocks.append(
                f"  {r.name} = {{\n"
                f"    database_name = {d}/principal\n"
                f"    key_stash_file = {d}/stash\n"
                f"    acl_file = {self.base}/kadm5.acl\n"
                f"    kdc_ports = {r.port}\n"
                f"    kdc_tcp_ports = {r.port}\n"
                f"    max_life = {self.max_life}\n"
                f"    max_renewable_life = {self.max_renewable_life}\n"
                "    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n"
                "  }\n"
            )
        return f"[realms]\n{''.join(blocks)}\n[logging]\n  kdc = FILE:{self.log}\n"

    def start(self, timeout: float = 30.0) -> None:
        for r in self.realms:
            if procs.port_in_use(r.port):
                raise EnvironmentNotReady(f"port {r.port} for the KDC of {r.name} is already in use")
        argv = [find_binary("krb5kdc"), "-n"]
        for r in self.realms:
            argv += ["-r", r.name]
        self._proc = procs.start(argv, env={**self.env, **self.launch_env}, log=self.base / "krb5kdc.out")
        self.pid = self._proc.pid
        for r in self.realms:
            procs.wait_until(
                partial(procs.tcp_open, r.port),
                what=f"the KDC for {r.name}",
                timeout=timeout,
                proc=self._proc,
                log=self.log,
            )

    def stop(self) -> None:
        if self.pid:
            procs.stop_pid(self.pid, expect_in_cmdline="krb5kdc")

    def _run(self, *argv: str, stdin: str | None = None) -> str:
        res = subprocess.run(
            argv,
            env=self.env,
            capture_output=True,
            text=True,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
        )
        if res.returncode != 0:
            raise EnvironmentNotReady(f"{Path(argv[0]).name} failed: {(res.stderr or res.stdout).strip()}")
        return res.stdout

    def kadmin(self, realm: str, query: str) -> str:
        """Run one kadmin.local query against ``realm``'s database."""
        out = self._run(find_binary("kadmin.local"), "-r", realm, "-q", query)
        return out

    def add_principal(self, principal: str, keytab: Path | None = None, maxlife: str | None = None) -> None:
        realm = principal.rsplit("@", 1)[1]
        opts = f'-maxlife "{maxlife}" ' if maxlife else ""
        self.kadmin(realm, f"addprinc -randkey {opts}{principal}")
        if keytab is not None:
            self.export_keytab(principal, keytab)

    def export_keytab(self, principal: str, keytab: Path, *, randomize: bool = True) -> None:
        """Write ``principal``'s keys into ``keytab`` (mode 0600). ``randomize`` makes a new key version."""
        realm = principal.rsplit("@", 1)[1]
        norand = "" if randomize else "-norandkey "
        self.kadmin(realm, f"ktadd -k {keytab} {norand}{principal}")
        keytab.chmod(0o600)

    def delete_principal(self, principal: str) -> None:
        self.kadmin(principal.rsplit("@", 1)[1], f"delprinc -force {principal}")


def krb5_conf(realms: list[SandboxRealm], *, default_realm: str) -> str:
    """A client krb5.conf naming every realm, with hosts mapped to realms by domain, no DNS guessing."""
    realm_lines = "".join(f"  {r.name} = {{\n    kdc = 127.0.0.1:{r.port}\n  }}\n" for r in realms)
    domain_lines = "".join(f"  .{d} = {r.name}\n  {d} = {r.name}\n" for r in realms for d in r.domains)
    return (
        "[libdefaults]\n"
        f"  default_realm = {default_realm}\n"
        "  dns_lookup_kdc = false\n"
        "  dns_lookup_realm = false\n"
        "  dns_canonicalize_hostname = false\n"
        "  rdns = false\n"
        "  udp_preference_limit = 1\n"
        "  forwardable = true\n"
        "\n[realms]\n" + realm_lines + "\n[domain_realm]\n" + domain_lines
    )
