"""The cut-over's record (issue 41): which steps are done, when, with what result, and what each changed, kept in
one JSON file beside the run (``<run dir>/cutover.json``, mode 0600, replaced whole at every change so a crash leaves
the last complete record). The same command run again reads it and goes on from the first step not done; each step
is written so that running it again is harmless. A record made for other groups or another profile is never
resumed by a different command: the command says so, and which file to finish or remove.

The transitions are pure (:class:`Record` methods take and give plain data); :class:`RecordFile` reads and writes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from secure_mirror.errors import BadInputError

FILE = "cutover.json"
VERSION = 1
STEPS = ("check", "fence", "drain", "sync", "stop", "promote", "report")
# The way back (``failback``): the same cut-over in the other direction, whose last change is not a promotion but the
# restoration of both clusters' bindings to what they were before the cut-over.
FAILBACK_STEPS = ("check", "fence", "drain", "sync", "stop", "restore", "report")
CUTOVER, FAILBACK = "cutover", "failback"
DONE, STARTED, FAILED = "done", "started", "failed"


def steps_of(direction: str) -> tuple[str, ...]:
    return FAILBACK_STEPS if direction == FAILBACK else STEPS


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class StepRecord:
    name: str
    status: str = ""  # "" (not begun), started, done, failed
    started: str | None = None
    ended: str | None = None
    attempts: int = 0
    result: dict = field(default_factory=dict)
    message: str = ""


@dataclass
class Record:
    """What the cut-over has done. ``command`` identifies it: the profile's digest, the direction, the groups."""

    command: dict
    steps: list[StepRecord] = field(default_factory=lambda: [StepRecord(name) for name in STEPS])
    notes: dict = field(default_factory=dict)  # what a step changed, written before it changes it
    version: int = VERSION

    @classmethod
    def new(cls, profile_text: str, direction: str, groups: list[str]) -> Record:
        return cls.start(command_key(profile_text, direction, groups))

    @classmethod
    def start(cls, command: dict) -> Record:
        """A record of nothing done yet, with the steps of ``command``'s direction."""
        return cls(command=command, steps=[StepRecord(name) for name in steps_of(command.get("direction", ""))])

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

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def of(cls, data: dict) -> Record:
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, not {VERSION}")
        names = [step["name"] for step in data["steps"]]
        expected = list(steps_of(data["command"].get("direction", "")))
        if names != expected:
            raise ValueError(f"steps {names}, not {expected}")
        return cls(
            command=dict(data["command"]),
            steps=[StepRecord(**step) for step in data["steps"]],
            notes=dict(data.get("notes") or {}),
        )


def command_key(profile_text: str, direction: str, groups: list[str]) -> dict:
    """What makes two runs the same cut-over: the profile's content, the direction and the groups (in any order)."""
    return {
        "profile_sha256": hashlib.sha256(profile_text.encode("utf-8")).hexdigest(),
        "direction": direction,
        "groups": sorted(set(groups)),
    }


def resume_problem(record: Record, key: dict) -> str | None:
    """Why ``record`` is not the cut-over ``key`` describes (a sentence), or None when it is."""
    if record.command == key:
        return None
    differs = [name for name in ("profile_sha256", "direction", "groups") if record.command.get(name) != key[name]]
    words = {"profile_sha256": "the profile's content", "direction": "the direction", "groups": "the groups"}
    return f"a cut-over with other {', '.join(words[name] for name in differs)} is recorded there"


class RecordFile:
    """The record on disk: read once, written whole (a temporary file renamed over it) after every change."""

    def __init__(self, folder: Path):
        self.path = folder / FILE

    def peek(self) -> Record | None:
        """The record kept here, whichever cut-over it is; None when there is none; refuses a damaged record."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            return Record.of(json.loads(text))
        except (ValueError, KeyError, TypeError, AttributeError) as damaged:
            raise BadInputError(
                f"{self.path} is not a cut-over record this version reads ({damaged}); move it away"
            ) from None

    def load(self, key: dict) -> Record | None:
        """The record of this cut-over, None when there is none; refuses another cut-over's or a damaged record."""
        record = self.peek()
        if record is None:
            return None
        if (why := resume_problem(record, key)) is not None:
            raise BadInputError(f"{self.path}: {why}; finish that one, or move the file away to start anew")
        return record

    def save(self, record: Record) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{FILE}.{os.getpid()}")
        temporary.unlink(missing_ok=True)
        with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
            json.dump(record.to_dict(), out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
