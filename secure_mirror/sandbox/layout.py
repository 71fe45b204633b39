"""Where a sandbox keeps each thing under its one folder (krb5.conf, the CA, keytabs, secrets, the profiles), and
the facts its ``state.json`` holds (its sides, ports and pids)."""

from __future__ import annotations

import json
from pathlib import Path

from secure_mirror.sandbox import credstore, oidc
from secure_mirror.sandbox.nodes import Side

STATE = "state.json"


class SandboxLayout:
    """The paths and recorded facts of the sandbox in ``base``, whose ``state.json`` is ``state``."""

    def __init__(self, base: Path, state: dict):
        self.base = Path(base).resolve()
        self.state = state
        self.sides = {s["name"]: Side.from_state(s) for s in state["sides"]}

    # ---- paths -------------------------------------------------------------------------------------
    @property
    def krb5_conf(self) -> Path:
        return self.base / "krb5.conf"

    @property
    def ca_file(self) -> Path:
        return self.base / "tls" / "ca.pem"

    @property
    def ca_key_file(self) -> Path:
        return self.base / "tls" / "ca.key"

    @property
    def wrong_ca_file(self) -> Path:
        return self.base / "tls" / "other-ca.pem"

    @property
    def profile_path(self) -> Path:
        return self.base / "profile.yaml"

    def keytab(self, side: str, who: str) -> Path:
        return self.base / side / f"{who}.keytab"

    def scram_password_file(self, side: str) -> Path:
        """The mirror's password on ``side`` for SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN alike."""
        return self.base / "secrets" / f"{side}-mirror.scram-password"

    @property
    def credential_store(self) -> Path:
        """A Hadoop credential store holding the target's SCRAM password (sandbox/credstore.py)."""
        return self.base / "secrets" / credstore.STORE

    @property
    def oauth(self) -> bool:
        """Whether this sandbox runs the identity provider (one started before it existed does not)."""
        return "oidc_port" in self.state

    @property
    def token_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.state['oidc_port']}{oidc.TOKEN_PATH}"

    @property
    def https_token_endpoint(self) -> str | None:
        """The same token endpoint over HTTPS (a certificate of the sandbox's CA), or None in an older sandbox."""
        port = self.state.get("oidc_tls_port")
        return f"https://{oidc.IDP_HOST}:{port}{oidc.TOKEN_PATH}" if port else None

    @property
    def oauth_secret_file(self) -> Path:
        """The client secret of the mirror's OAuth client (client id ``mirror``)."""
        return self.base / "secrets" / "oauth-mirror.secret"

    def client_pair(self, side: str) -> tuple[Path, Path]:
        """The mirror's client certificate (subject CN=mirror.<domain>) and key for the SSL listener."""
        return self.base / side / "mirror-client.pem", self.base / side / "mirror-client.key"

    def corp_keytab(self) -> Path:
        return self.base / "corp" / "mirror.keytab"

    # ---- the state --------------------------------------------------------------------------------
    @property
    def corp(self) -> bool:
        """Whether this sandbox has the corporate realm (a sandbox started before it existed has not)."""
        return "corp_kdc_port" in self.state

    @property
    def replication_factor(self) -> int:
        """The replication factor of the topics made here for mirroring: 3 from three brokers a side (their
        ``min.insync.replicas`` 2 is the brokers' default), else one replica a broker."""
        return min(len(self.sides["source"].nodes), 3)

    def pid_key(self, side: str, node_id: int = 1) -> str:
        """The broker's name in ``state["pids"]``: the side with one broker (as always), else ``<side>-<node id>``."""
        return side if len(self.sides[side].nodes) == 1 else f"{side}-{node_id}"

    def _save(self) -> None:
        """``state`` written to ``state.json`` (through a temporary file, replaced at once)."""
        tmp = self.base / (STATE + ".tmp")
        tmp.write_text(json.dumps(self.state, indent=2))
        tmp.replace(self.base / STATE)
