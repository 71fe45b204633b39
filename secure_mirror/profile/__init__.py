"""The profile: one validated description of a mirror (two clusters, their credentials, the topics that flow).

Other layers call :func:`load_profile` and then read the :class:`Profile`; secrets stay references
(:class:`SecretRef`) until a renderer or the run layer calls ``resolve()``.
"""

from secure_mirror.profile.cluster import SIDES, Cluster, Side
from secure_mirror.profile.delivery import Delivery
from secure_mirror.profile.loader import ProfileError, load_profile
from secure_mirror.profile.mirror import Mirror, Rename, Topics
from secure_mirror.profile.models import Profile
from secure_mirror.profile.principals import kafka_principal_for_kerberos, parse_principal
from secure_mirror.profile.runtime import Spark
from secure_mirror.profile.schema import profile_json_schema
from secure_mirror.profile.secrets import SecretRef, SecretUnavailable
from secure_mirror.profile.security import GssapiSasl, Kerberos, OAuthSasl, PasswordSasl, Realm, Tls
from secure_mirror.profile.topics import TopicSelection, classify, subscribe_pattern
from secure_mirror.profile.warnings import ProfileWarning, profile_warnings, refuse_warnings

__all__ = [
    "Cluster",
    "Delivery",
    "GssapiSasl",
    "Kerberos",
    "Mirror",
    "OAuthSasl",
    "PasswordSasl",
    "Profile",
    "ProfileError",
    "ProfileWarning",
    "SIDES",
    "Realm",
    "Rename",
    "SecretRef",
    "SecretUnavailable",
    "Side",
    "Spark",
    "Tls",
    "TopicSelection",
    "Topics",
    "classify",
    "kafka_principal_for_kerberos",
    "load_profile",
    "parse_principal",
    "profile_json_schema",
    "profile_warnings",
    "refuse_warnings",
    "subscribe_pattern",
]
