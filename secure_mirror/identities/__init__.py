"""An identity's process and folder: one private folder per run (krb5.conf written once, a credential cache per
identity) and, for each (side, who), a Kafka identity with its kept processes. Pre-flight, the run's clients (lag,
verify, group sync and failover), ``acls`` and the sandbox reach Kafka through it."""

from secure_mirror.identities.folder import IdentityFolder
from secure_mirror.identities.kept import Caller, Identities

__all__ = ["Caller", "Identities", "IdentityFolder"]
