"""One private folder for a run's identities: mode 0700, the krb5.conf they use written once, and a credential cache
of its own for each identity (side and who: the mirror, an admin), which librdkafka's kinit fills.

A temporary folder names the process that made it (``.owner``: its pid and start time). A command killed with
SIGKILL cannot remove its folder, and the credential caches in it would stay until the machine's temporary files are
cleared; so each new temporary folder first removes the folders of its prefix, this user's, whose owner is gone.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from secure_mirror.kafka.identity import KafkaIdentity, kerberos_env
from secure_mirror.kafka.processes import pid_alive
from secure_mirror.profile.cluster import Cluster
from secure_mirror.profile.models import Profile
from secure_mirror.render import krb5, librdkafka


class IdentityFolder:
    """``krb5(folder)`` writes the krb5.conf into the folder when there is one to write, and returns the krb5.conf
    to use (None: the system's). Without ``path`` the folder is a new temporary one, removed by :meth:`remove`;
    with it (the sandbox's), the folder is made private when missing and kept."""

    def __init__(self, krb5_conf: Callable[[Path], str | None], *, path: Path | None = None, prefix: str = "sm-"):
        self.owned = path is None
        if path is None:
            sweep(Path(tempfile.gettempdir()), prefix)
            path = Path(tempfile.mkdtemp(prefix=prefix))  # mode 0700
            (path / OWNER).write_text(process_mark(os.getpid()), encoding="utf-8")
        else:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        self.krb5_config = krb5_conf(path)

    @classmethod
    def for_profile(cls, profile: Profile, prefix: str = "secure-mirror-") -> IdentityFolder:
        """A new folder with the profile's krb5.conf (``render/krb5.write_into``)."""
        return cls(functools.partial(krb5.write_into, profile), prefix=prefix)

    def ccache(self, side: str, who: str) -> str:
        return str(self.path / f"{side}-{who}.ccache")

    def env(self, side: str, who: str) -> dict[str, str]:
        """The environment of a process acting as ``who`` on ``side``: the krb5.conf, its own credential cache."""
        return kerberos_env(self.krb5_config, self.ccache(side, who))

    def identity(self, cluster: Cluster, side: str, who: str = "mirror") -> KafkaIdentity:
        """``cluster``'s identity as render's librdkafka settings say, with this folder's Kerberos environment."""
        return librdkafka.identity(cluster, side, ccache=self.ccache(side, who), krb5_config=self.krb5_config)

    def remove(self) -> None:
        if self.owned:
            shutil.rmtree(self.path, ignore_errors=True)


OWNER = ".owner"


def process_mark(pid: int) -> str:
    """``pid`` and, where /proc tells it, the process's start time (a pid used again is another process)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return str(pid)
    return f"{pid} {stat[stat.rindex(')') + 2 :].split()[19]}"


def owner_alive(mark: str) -> bool:
    pid = int(mark.split()[0])
    return pid_alive(pid) and (len(mark.split()) == 1 or process_mark(pid) == mark)


def sweep(parent: Path, prefix: str) -> list[Path]:
    """Remove the folders ``parent/prefix*`` of this user whose ``.owner`` names a process that is gone; the ones
    removed. A folder without an owner (not made here, or not yet marked) is left alone."""
    removed = []
    for folder in parent.glob(f"{prefix}*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            if not owner_alive((folder / OWNER).read_text(encoding="utf-8")):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed
