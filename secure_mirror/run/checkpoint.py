"""Reading a local Spark checkpoint without Spark: the offsets the mirror committed, where it started, and the
profile fingerprint stored next to them (written by the job, checked before a run)."""

from __future__ import annotations

import json
from pathlib import Path

from secure_mirror.errors import BadInputError
from secure_mirror.profile.job_settings import FINGERPRINT_FILE

Offsets = dict[tuple[str, int], int]


def local_folder(location: str) -> Path | None:
    """The checkpoint as a local folder, or None for a remote URI (hdfs://, s3a:// ...)."""
    if location.startswith("file://"):
        return Path(location[len("file://"):])
    if "://" in location:
        return None
    return Path(location)


def _batch_ids(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def offset_log_offsets(text: str) -> Offsets:
    """The first source's offsets of an offsets-log file (``v1``, metadata, then one JSON line per source)."""
    lines = text.splitlines()
    for line in lines[2:3]:
        if line.strip().startswith("{"):
            return _parse(json.loads(line))
    return {}


def _parse(data: dict) -> Offsets:
    return {(topic, int(p)): int(o) for topic, parts in data.items() for p, o in parts.items()}


def committed_offsets(location: str) -> tuple[int, Offsets] | None:
    """(batch id, offsets) of the newest batch whose commit is recorded, or None when nothing was committed."""
    folder = local_folder(location)
    if folder is None:
        raise BadInputError(f"the checkpoint {location} is not a local folder; lag and verify read local "
                            "checkpoints only")
    committed = set(_batch_ids(folder / "commits"))
    for batch in reversed(_batch_ids(folder / "offsets")):
        if batch in committed:
            return batch, offset_log_offsets((folder / "offsets" / str(batch)).read_text(encoding="utf-8"))
    return None


def initial_offsets(location: str) -> Offsets:
    """Where the query started on the partitions it knew at its first batch (``sources/0/0``)."""
    folder = local_folder(location)
    path = folder / "sources" / "0" / "0" if folder else None
    if path is None or not path.exists():
        return {}
    return initial_offsets_file(path.read_text(encoding="utf-8", errors="replace"))


def initial_offsets_file(text: str) -> Offsets:
    """The offsets of a ``sources/0/0`` file (a version line, then JSON)."""
    start = text.find("{")
    return _parse(json.loads(text[start:])) if start >= 0 else {}


def fingerprint_mismatch(location: str, stored: dict, expected: dict) -> str | None:
    """Why a checkpoint stamped with ``stored`` must not be resumed by a job of ``expected`` (the sentence the
    launcher and the job both refuse with), or None when the fingerprints agree."""
    if stored.get("sha256") == expected["sha256"]:
        return None
    old, new = stored.get("settings", {}), expected["settings"]
    changes = ", ".join(f"{key}: {old.get(key)!r} -> {new[key]!r}" for key in sorted(new) if old.get(key) != new[key])
    return (f"the checkpoint {location} belongs to a profile with other topic or rename settings ({changes}); "
            "resuming would skip or misroute records. Point mirror.checkpoint_location at a new folder, or restore "
            "the old settings")


def check_fingerprint(location: str, expected: dict) -> None:
    """Refuse (exit 2) a local checkpoint stamped by a profile with other topic or rename settings."""
    folder = local_folder(location)
    if folder is None or not (folder / FINGERPRINT_FILE).exists():
        return  # the job checks remote checkpoints, and stamps new ones
    stored = json.loads((folder / FINGERPRINT_FILE).read_text(encoding="utf-8"))
    if (problem := fingerprint_mismatch(location, stored, expected)) is not None:
        raise BadInputError(problem)
