"""What the way back (``failback``, docs/cutover.md) takes from the forward cut-over: the profiles that make a way back
(:func:`way_back_problems`), the forward cut-over's record (:func:`forward_record`: complete, and of the same
profile), and the identities seen as the forward flow names the sides (:class:`Reversed`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from secure_mirror.cutover.record import CUTOVER, FILE, Record, RecordFile, StepNames, profile_digest
from secure_mirror.errors import BadInputError
from secure_mirror.identities import Identities
from secure_mirror.identities.kept import MIRROR
from secure_mirror.profile.cluster import Side
from secure_mirror.profile.models import Profile

T = TypeVar("T")
OTHER: dict[Side, Side] = {"source": "target", "target": "source"}


@dataclass
class Forward:
    """For the way back: the forward cut-over's profile, record and run folder (where its record is kept)."""

    profile: Profile
    record: Record
    run_dir: Path
    path: Path  # the forward record's file


def way_back_problems(forward: Profile, back: Profile) -> list[str]:
    """Why ``back`` is not the way back of ``forward`` that failback can use (sentences; empty when it is)."""
    out = []
    if (back.source.alias, back.target.alias) != (forward.target.alias, forward.source.alias):
        out.append(
            f"--back copies {back.source.alias} -> {back.target.alias}, not {forward.target.alias} -> "
            f"{forward.source.alias}: write it with `secure-mirror reverse PROFILE --out BACK`"
        )
    elif (back.source.sasl, back.source.tls) != (forward.target.sasl, forward.target.tls):  # see Reversed
        out.append(
            f"--back's {back.source.alias} identity is not the one the cut-over's mirror has there: the way back reads "
            "the cut-over's offset map with it; write it with `secure-mirror reverse PROFILE --out BACK`"
        )
    if forward.mirror.rename.rule != "identity":
        out.append(
            f"the cut-over's mirror renames topics (mirror.rename.rule: {forward.mirror.rename.rule}): the producers "
            "now write the target's copies, which the way back does not copy; failback needs kept names "
            "(rename: identity, with provenance headers)"
        )
    if not back.mirror.provenance_headers:
        out.append("--back: mirror.provenance_headers is off, so the way back would copy the cut-over's records back")
    return out


def forward_record(run_dir: Path, back_record: Record | None, names: StepNames) -> tuple[Record, Path]:
    """The cut-over's record: in ``run_dir``, or where a failback that restored already kept it."""
    kept = (back_record.notes.forward_record if back_record else None) or ""
    path = Path(kept) if kept and Path(kept).exists() else run_dir / FILE
    record = RecordFile(path, names).peek(advice="")
    if record is None:
        raise BadInputError(f"{path}: no cut-over is recorded there; name the --run-dir of a complete cutover")
    if record.command.direction != CUTOVER:
        raise BadInputError(f"{path} records a {record.command.direction}, not a cutover")
    if not record.complete:
        raise BadInputError(
            f"{path}: the cut-over is not complete (next: {record.next_step()}); finish it first with the same "
            "`secure-mirror cutover` command"
        )
    return record, path


def forward_of(profile: Profile, profile_path: str, run_dir: Path, back: RecordFile) -> Forward:
    """The forward cut-over the way back returns from (``profile``, read from ``profile_path``): complete, and run
    with that profile's content."""
    record, path = forward_record(run_dir, back.peek(), back.names)
    if record.command.profile_sha256 != profile_digest(Path(profile_path).read_text(encoding="utf-8")):
        raise BadInputError(f"{path}: that cut-over ran with another profile's content than {profile_path}")
    return Forward(profile, record, run_dir, path)


class Reversed:
    """The way back's identities as the forward flow names the sides: the way back's source is the forward's target,
    the same cluster section with the same identity (``profile/reverse.py`` swaps them whole). Through it the way
    back reads what the forward flow keeps there (its offset map) with the set it already has."""

    def __init__(self, identities: Identities):
        self.identities = identities

    def call(self, side: Side, fn: Callable[..., T], *args: Any, who: str = MIRROR, **kwargs: Any) -> T:
        return self.identities.call(OTHER[side], fn, *args, who=who, **kwargs)
