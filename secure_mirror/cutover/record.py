"""The cut-over's record (issue 41): which steps are done, when, with what result, and what each noted
(``notes.Notes``), kept in one JSON file beside the run (``<run dir>/cutover.json``, mode 0600, replaced whole at
every change so a crash leaves the last complete record). The same command run again reads it and goes on from the
first step not done; each step is written so that running it again is harmless. A record made for other groups or
another profile is never resumed by a different command: the command says so, and which file to finish or remove.

The transitions are pure (:class:`Record` methods take and give plain data); :class:`RecordFile` reads and writes.
Which steps a record holds, in which order, is the step table's (``steps.names``): a record is started with them and
read back against them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from secure_mirror import folders
from secure_mirror.cutover.notes import Notes
from secure_mirror.errors import BadInputError

FILE = "cutover.json"
VERSION = 1
CUTOVER, FAILBACK = "cutover", "failback"
DONE, STARTED, FAILED = "done", "started", "failed"

StepNames = Callable[[str], Sequence[str]]  # a direction -> its steps' names, in order


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Command:
    """What makes two runs the same cut-over: the profile's content, the direction and the groups (sorted, once)."""

    profile_sha256: str
    direction: str
    groups: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"profile_sha256": self.profile_sha256, "direction": self.direction, "groups": list(self.groups)}

    @classmethod
    def of(cls, data: dict[str, Any]) -> Command:
        return cls(str(data["profile_sha256"]), str(data["direction"]), tuple(str(g) for g in data["groups"]))


def profile_digest(profile_text: str) -> str:
    return hashlib.sha256(profile_text.encode("utf-8")).hexdigest()


def command_key(profile_text: str, direction: str, groups: Sequence[str]) -> Command:
    return Command(profile_digest(profile_text), direction, tuple(sorted(set(groups))))


@dataclass
class StepRecord:
    name: str
    status: str = ""  # "" (not begun), started, done, failed
    started: str | None = None
    ended: str | None = None
    attempts: int = 0
    result: dict = field(default_factory=dict)  # what the step found: each step its own
    message: str = ""


@dataclass
class Record:
    """What the cut-over has done. ``command`` identifies it: the profile's digest, the direction, the groups."""

    command: Command
    steps: list[StepRecord]
    notes: Notes = field(default_factory=Notes)  # what a step changes, written before it changes it
    version: int = VERSION

    @classmethod
    def start(cls, command: Command, names: Sequence[str]) -> Record:
        """A record of nothing done yet, with the steps ``names``."""
        return cls(command=command, steps=[StepRecord(name) for name in names])

    def step(self, name: str) -> StepRecord:
        return next(step for step in self.steps if step.name == name)

    def next_step(self) -> str | None:
        """The first step not done, or None when the cut-over is complete."""
        return next((step.name for step in self.steps if step.status != DONE), None)

    def begin(self, name: str, at: str) -> None:
        if name != self.next_step():
            raise ValueError(f"step {name} is not next ({self.next_step()} is)")
        step = self.step(name)
        step.status, step.started, step.ended, step.attempts, step.message = STARTED, at, None, step.attempts + 1, ""

    def finish(self, name: str, at: str, result: dict) -> None:
        step = self.step(name)
        if step.status != STARTED:
            raise ValueError(f"step {name} was not started")
        step.status, step.ended, step.result = DONE, at, result

    def fail(self, name: str, at: str, message: str, result: dict | None = None) -> None:
        step = self.step(name)
        step.status, step.ended, step.message, step.result = FAILED, at, message, result or {}

    @property
    def complete(self) -> bool:
        return self.next_step() is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command.to_dict(),
            "steps": [asdict(step) for step in self.steps],
            "notes": self.notes.to_dict(),
            "version": self.version,
        }

    @classmethod
    def of(cls, data: dict[str, Any], names: StepNames) -> Record:
        """The record ``data`` holds; refused (ValueError) when it is not of this version or its steps are not
        those of its direction, in order."""
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, not {VERSION}")
        command = Command.of(data["command"])
        found, expected = [step["name"] for step in data["steps"]], list(names(command.direction))
        if found != expected:
            raise ValueError(f"steps {found}, not {expected}")
        return cls(command, [StepRecord(**step) for step in data["steps"]], Notes.of(data.get("notes") or {}))


def resume_problem(record: Record, key: Command) -> str | None:
    """Why ``record`` is not the cut-over ``key`` describes (a sentence), or None when it is."""
    if record.command == key:
        return None
    words = {"profile_sha256": "the profile's content", "direction": "the direction", "groups": "the groups"}
    differs = [words[name] for name in words if getattr(record.command, name) != getattr(key, name)]
    return f"a cut-over with other {', '.join(differs)} is recorded there"


class RecordFile:
    """A record on disk (``path``, ``<run dir>/cutover.json`` unless kept aside): read once, written whole
    (``folders.write_durably``) after every change; ``names`` gives the steps of each direction."""

    def __init__(self, path: Path, names: StepNames):
        self.path, self.names = path, names

    def peek(self, advice: str = "; move it away") -> Record | None:
        """The record kept here, whichever cut-over it is; None when there is none; refuses a damaged record (the
        sentence ends with ``advice``)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return Record.of(json.loads(text), self.names)
        except (ValueError, KeyError, TypeError, AttributeError) as damaged:
            raise BadInputError(
                f"{self.path} is not a cut-over record this version reads ({damaged}){advice}"
            ) from None

    def load(self, key: Command) -> Record | None:
        """The record of this cut-over, None when there is none; refuses another cut-over's or a damaged record."""
        record = self.peek()
        if record is None:
            return None
        if (why := resume_problem(record, key)) is not None:
            raise BadInputError(f"{self.path}: {why}; finish that one, or move the file away to start anew")
        return record

    def resume(self, key: Command) -> Record:
        """The record of this cut-over, or a new one when there is none."""
        return self.load(key) or Record.start(key, self.names(key.direction))

    def save(self, record: Record) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        text = json.dumps(record.to_dict(), indent=2, sort_keys=True) + "\n"
        folders.write_durably(self.path, text, 0o600)
