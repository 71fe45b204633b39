"""Reading a Spark checkpoint without Spark: the offsets the mirror committed, where it started, and the profile
fingerprint stored next to them (written by the job, checked before a run). A local folder is read directly; a
remote one (hdfs:// ...) through the Hadoop client with the profile's ``hadoop`` section (``remote_checkpoint``)."""

from __future__ import annotations

import json
from pathlib import Path

from secure_mirror.errors import BadInputError
from secure_mirror.profile.job_settings import FINGERPRINT_FILE
from secure_mirror.profile.models import Profile
from secure_mirror.run import remote_checkpoint

Offsets = dict[tuple[str, int], int]


def local_folder(location: str) -> Path | None:
    """The checkpoint as a local folder, or None for a remote URI (hdfs://, s3a:// ...)."""
    if location.startswith("file://"):
        return Path(location[len("file://") :])
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


def snapshot(location: str, profile: Profile | None = None) -> remote_checkpoint.Snapshot:
    """The batch ids and the files lag, verify and the fingerprint check read: the newest committed offsets file,
    ``sources/0/0`` and the fingerprint (a remote checkpoint through the Hadoop client of ``profile.hadoop``)."""
    folder = local_folder(location)
    if folder is None:
        return remote_checkpoint.read(location, profile)
    found = remote_checkpoint.Snapshot(_batch_ids(folder / "offsets"), set(_batch_ids(folder / "commits")))
    newest = next((batch for batch in reversed(found.offsets) if batch in found.commits), None)
    for name in ([f"offsets/{newest}"] if newest is not None else []) + ["sources/0/0", FINGERPRINT_FILE]:
        if (folder / name).is_file():
            found.files[name] = (folder / name).read_text(encoding="utf-8", errors="replace")
    return found


def committed_offsets(
    location: str, profile: Profile | None = None, found: remote_checkpoint.Snapshot | None = None
) -> tuple[int, Offsets] | None:
    """(batch id, offsets) of the newest batch whose commit is recorded, or None when nothing was committed."""
    found = found or snapshot(location, profile)
    for batch in reversed(found.offsets):
        if batch in found.commits:
            return batch, offset_log_offsets(found.files.get(f"offsets/{batch}", ""))
    return None


def mirrored_to(profile: Profile) -> Offsets:
    """The mirror's committed source positions (its checkpoint), {} when it has committed nothing yet."""
    found = committed_offsets(profile.mirror.checkpoint_location, profile)
    return dict(found[1]) if found else {}


def initial_offsets(
    location: str, profile: Profile | None = None, found: remote_checkpoint.Snapshot | None = None
) -> Offsets:
    """Where the query started on the partitions it knew at its first batch (``sources/0/0``)."""
    found = found or snapshot(location, profile)
    text = found.files.get("sources/0/0")
    return initial_offsets_file(text) if text else {}


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
    return (
        f"the checkpoint {location} belongs to a profile with other topic or rename settings ({changes}); "
        "resuming would skip or misroute records. Point mirror.checkpoint_location at a new folder, or restore "
        "the old settings"
    )


def check_fingerprint(location: str, expected: dict, profile: Profile | None = None) -> None:
    """Refuse (exit 2) a checkpoint stamped by a profile with other topic or rename settings. A remote checkpoint
    is read through the Hadoop client when the profile has a ``hadoop`` section; else the job checks it."""
    if local_folder(location) is None and (profile is None or profile.hadoop is None):
        return
    text = snapshot(location, profile).files.get(FINGERPRINT_FILE)
    if text is None:
        return  # a new checkpoint: the job stamps it
    stored = json.loads(text)
    if (problem := fingerprint_mismatch(location, stored, expected)) is not None:
        raise BadInputError(problem)
