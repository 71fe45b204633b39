"""The shape of ``spark/job.json``, written once here: ``render/job_file.py`` builds a :class:`JobSettings` from the
profile and writes :meth:`JobSettings.to_json`; the job reads it back with :meth:`JobSettings.from_json`
(``run/job/options.py``). A field's name lives in this module only.

Standard library only: the job imports this under spark-submit. The same version of secure-mirror writes and reads
the file, so a file of another shape (a missing or unknown field) is refused, never guessed at.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal


class JobFileError(ValueError):
    """``job.json`` is not of this version's shape; the sentence says which field."""


@dataclass(frozen=True)
class JobIdentity:
    """One side's GSSAPI identity as the job sees it (the shipped keytab's name when files travel with the job)."""

    side: Literal["source", "target"]
    principal: str
    keytab: str


@dataclass(frozen=True)
class JobTopicShape:
    """``mirror.topic_shape`` (docs/replica.md)."""

    sync_configs: bool
    exclude_configs: tuple[str, ...]
    grow_partitions: bool
    interval_seconds: int


@dataclass(frozen=True)
class JobSettings:
    """What the mirror job needs besides the Kafka options, as data (no secrets in it)."""

    target_topic_pieces: tuple[str, ...]  # the target name: topic.join(pieces)
    keep_partition: bool | Literal["auto"]
    provenance_headers: bool
    source_alias: str
    target_alias: str
    checkpoint_location: str
    trigger: Literal["micro_batch", "continuous"]
    source_format: str  # the Spark source the query reads with (the mirror's own)
    continuous_interval_ms: int
    check_cluster_security: bool
    fingerprint: dict[str, Any]  # {"sha256", "settings"}: stored next to the checkpoint (profile/job_settings.py)
    identities: tuple[JobIdentity, ...]
    topic_shape: JobTopicShape
    ride_through_seconds: int  # mirror.ride_through_seconds: how long the driver rides through (run/job/ride.py)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> JobSettings:
        """The settings of ``text``; :class:`JobFileError` when it is not JSON of this shape."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise JobFileError(f"it is not JSON ({exc})") from None
        given = _fields(cls, data, "")
        return cls(
            **{
                **given,
                "target_topic_pieces": tuple(given["target_topic_pieces"]),
                "identities": tuple(JobIdentity(**_fields(JobIdentity, i, "identities.")) for i in given["identities"]),
                "topic_shape": _shape(_fields(JobTopicShape, given["topic_shape"], "topic_shape.")),
            }
        )


def _shape(given: dict[str, Any]) -> JobTopicShape:
    return JobTopicShape(**{**given, "exclude_configs": tuple(given["exclude_configs"])})


def _fields(kind: Any, data: Any, where: str) -> dict[str, Any]:
    """``data`` when it is an object with exactly the fields of ``kind``."""
    if not isinstance(data, dict):
        raise JobFileError(f"{where.rstrip('.') or 'the file'} is not an object")
    names = {field.name for field in fields(kind)}
    missing, unknown = sorted(names - set(data)), sorted(set(data) - names)
    if missing or unknown:
        said = [f"no {where}{name}" for name in missing] + [f"an unknown field {where}{name}" for name in unknown]
        raise JobFileError(f"it has {', '.join(said)}")
    return data
