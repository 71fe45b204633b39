"""What a sandbox is given at its start to prove who is who: the CA and each server's and client's certificate, the
principals and keytabs of each side's brokers, mirror and admin and of the corporate realm, and random secrets in
0600 files."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

from secure_mirror.sandbox import oidc
from secure_mirror.sandbox.kafka import Broker
from secure_mirror.sandbox.kdc import CORP_MIRROR, CORP_REALM, KDC
from secure_mirror.sandbox.layout import SandboxLayout
from secure_mirror.sandbox.tls import CertificateAuthority, write_private


def write_secret(path: Path) -> None:
    """A random secret in a new 0600 file."""
    write_private(path, secrets.token_urlsafe(24).encode())


class SandboxCredentials(SandboxLayout):
    """Mixed into :class:`~secure_mirror.sandbox.bed.Sandbox`, which provides what is declared here."""

    brokers: Callable[[str], list[Broker]]

    def _make_tls(self) -> None:
        (self.base / "tls").mkdir(exist_ok=True)
        ca = CertificateAuthority()
        ca.write_ca(self.ca_file)
        ca.write_key(self.ca_key_file)  # 0600: the Hadoop daemons' certificate may be issued later (start_hadoop)
        CertificateAuthority("an unrelated CA").write_ca(self.wrong_ca_file)
        (self.base / "oidc").mkdir(exist_ok=True, mode=0o700)
        ca.write_server_keystore(self.base / "oidc" / "server.pem", [oidc.IDP_HOST])
        for side, s in self.sides.items():
            (self.base / side).mkdir(exist_ok=True, mode=0o700)
            for broker in self.brokers(side):  # each broker its own certificate, for its own host name
                ca.write_server_keystore(broker.keystore, [broker.host])
            ca.write_client_pair(
                self.base / side / "mirror-client.pem", self.base / side / "mirror-client.key", f"mirror.{s.domain}"
            )

    def _make_identities(self, kdc: KDC, side: str) -> None:
        s = self.sides[side]
        for broker in self.brokers(side):  # each broker its own service principal and keytab
            kdc.add_principal(broker.principal, broker.keytab)
        kdc.add_principal(s.mirror_principal, self.keytab(side, "mirror"))
        kdc.add_principal(s.admin_principal, self.keytab(side, "admin"))
        kdc.write_krb5_conf(self.base / side / "krb5.conf", default_realm=s.realm)  # the broker's: its own realm
        write_secret(self.scram_password_file(side))

    def _make_corp_identity(self, kdc: KDC) -> None:
        """mirror@CORP.TEST, and the trust of each side's realm in CORP.TEST: the same cross-realm key
        krbtgt/<side realm>@CORP.TEST in both databases (same name, so same salt; a random password, which only
        kadmin.local's arguments see, on this throwaway KDC)."""
        (self.base / "corp").mkdir(exist_ok=True, mode=0o700)
        for s in self.sides.values():
            query = f"addprinc -pw {secrets.token_urlsafe(24)} krbtgt/{s.realm}@{CORP_REALM}"
            kdc.kadmin(CORP_REALM, query)
            kdc.kadmin(s.realm, query)
        kdc.add_principal(CORP_MIRROR, self.corp_keytab())
