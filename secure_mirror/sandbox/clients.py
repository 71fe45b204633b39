"""The sandbox's clients: a Kafka identity of the mirror or the admin on either side, built as a profile side is,
and calls made as one."""

from __future__ import annotations

import os

from secure_mirror.identities import IdentityFolder
from secure_mirror.kafka.identity import ClientConf, KafkaIdentity
from secure_mirror.profile.cluster import Cluster
from secure_mirror.sandbox.layout import SandboxLayout
from secure_mirror.sandbox.profile import cluster_dict


class SandboxClients(SandboxLayout):
    """Kafka clients of the sandbox's identities, each in this process's private folder."""

    def identity(self, side: str, who: str = "mirror", *, mechanism: str = "GSSAPI") -> KafkaIdentity:
        """``who`` (mirror or admin) on ``side``, built as a profile side is (render's librdkafka settings)."""
        cluster = Cluster.model_validate(cluster_dict(self, side, f"sandbox-{side}", mechanism, who))
        return self.identity_folder().identity(cluster, side, who)

    def identity_folder(self) -> IdentityFolder:
        """This process's private folder of the sandbox's identities (the sandbox's krb5.conf; a credential cache
        each); kept with the sandbox, whose other users (test processes) have folders of their own."""
        return IdentityFolder(lambda _folder: str(self.krb5_conf), path=self.base / "ccache" / str(os.getpid()))

    def client_conf(self, side: str, who: str = "mirror", *, mechanism: str = "GSSAPI") -> ClientConf:
        """A librdkafka config for ``who`` (mirror or admin) on ``side``."""
        return self.identity(side, who, mechanism=mechanism).conf

    def identity_env(self, side: str, who: str) -> dict[str, str]:
        return self.identity(side, who).env()

    def admin(self, side: str, fn, *args, **kwargs):
        """Call an ``admin_ops`` function as the cluster's admin principal (a super user)."""
        return self.identity(side, "admin").call(fn, *args, **kwargs)

    def as_mirror(self, side: str, fn, *args, **kwargs):
        """Call an ``admin_ops`` function as the mirroring principal (subject to ACLs)."""
        return self.identity(side, "mirror").call(fn, *args, **kwargs)
