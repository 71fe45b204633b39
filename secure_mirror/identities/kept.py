"""A run's identities: one :class:`IdentityFolder`, and for each (side, who) a Kafka identity whose calls run in
kept processes of its own (``kafka/processes.py``). ``close()`` ends every process and removes the folder."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from secure_mirror.identities.folder import IdentityFolder
from secure_mirror.kafka.identity import ClientConf, KafkaIdentity
from secure_mirror.kafka.processes import IdentityProcess, KeptProcesses
from secure_mirror.profile.cluster import SIDES, Cluster, Side
from secure_mirror.profile.models import Profile

T = TypeVar("T")
MIRROR = "mirror"


class Caller(Protocol):
    """What a reader needs of a set of identities: ``call(side, fn, *args)``, ``fn`` run as that side's identity.
    :class:`Identities` is one; a reader given one uses it and leaves it open (as httpx's client its transport)."""

    def call(self, side: Side, fn: Callable[..., T], *args: Any, who: str = MIRROR, **kwargs: Any) -> T: ...


class Identities:
    """``with Identities.for_profile(profile) as identities: identities.call("source", fn, *args)`` runs
    ``fn(conf, *args)`` as the source's mirror identity. ``clusters`` maps (side, who) to the cluster block the
    identity is built from; ``settings`` adds client settings to a side's mirror identity."""

    def __init__(
        self,
        folder: IdentityFolder,
        clusters: Mapping[tuple[Side, str], Cluster],
        settings: Mapping[Side, ClientConf] | None = None,
    ):
        self.folder, self.clusters, self.settings = folder, dict(clusters), dict(settings or {})
        self._kept: dict[tuple[Side, str], KeptProcesses] = {}
        self._identities: dict[tuple[Side, str], KafkaIdentity] = {}  # built once (render's settings, secrets read)
        self._own: list[IdentityProcess] = []
        self._lock = threading.Lock()

    @classmethod
    def for_profile(
        cls,
        profile: Profile,
        *,
        admins: Mapping[Side, Cluster] | None = None,
        settings: Mapping[Side, ClientConf] | None = None,
        prefix: str = "secure-mirror-",
    ) -> Identities:
        """The profile's mirror identity on each side, and ``admins``' (side -> the admin's cluster block)."""
        clusters: dict[tuple[Side, str], Cluster] = {(side, MIRROR): profile.cluster(side) for side in SIDES}
        clusters.update({(side, "admin"): cluster for side, cluster in (admins or {}).items()})
        return cls(IdentityFolder.for_profile(profile, prefix), clusters, settings)

    def __enter__(self) -> Identities:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def krb5_config(self) -> str | None:
        return self.folder.krb5_config

    def identity(self, side: Side, who: str = MIRROR) -> KafkaIdentity:
        with self._lock:
            if (side, who) not in self._identities:
                identity = self.folder.identity(self.clusters[(side, who)], side, who)
                extra = self.settings.get(side, {}) if who == MIRROR else {}
                self._identities[(side, who)] = identity.with_settings(extra)
            return self._identities[(side, who)]

    def call(self, side: Side, fn: Callable[..., T], *args: Any, who: str = MIRROR, **kwargs: Any) -> T:
        """``fn(conf, *args, **kwargs)`` in a kept process of ``who`` on ``side``."""
        identity = self.identity(side, who)
        with self._lock:
            if (side, who) not in self._kept:
                self._kept[(side, who)] = KeptProcesses(identity.env())
            kept = self._kept[(side, who)]
        return kept.call(fn, identity.conf, *args, **kwargs)

    def process(self, side: Side, who: str = MIRROR) -> IdentityProcess:
        """A process of its own acting as ``who`` on ``side``, for work with a deadline (``submit``, ``result``);
        ended by :meth:`close` at the latest."""
        process = IdentityProcess(self.folder.env(side, who))
        with self._lock:
            self._own.append(process)
        return process

    def close(self) -> None:
        with self._lock:
            kept, own, self._kept, self._own = list(self._kept.values()), self._own, {}, []
        for each in own:
            each.release()
        for pool in kept:
            pool.close()
        for each in own:
            each.close()
        self.folder.remove()
