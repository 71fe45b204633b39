"""Where a Flight Recording's CPU samples and compilations went: ``python -m benchmarks.recordings FILE.jfr ...``.

For the recordings ``scripts/bench --scale --jfr`` keeps (``launch.jfr_options``: samples put where they fell, every
compilation recorded; benchmarks/NOTES.md section 23). The JDK's own ``jfr`` tool reads each file; the rest are pure
functions over what it printed:

- :func:`split`: each CPU sample counted once, for the first of :data:`PATHS` met walking its stack from the running
  frame down (so a sample in the producer's ``send`` that the sink called counts for the ``send``);
- :func:`within`: the share of samples with any frame matching a marker (``--frames``);
- :func:`compile_seconds`: the compilations' time by whose code was compiled (``--compilations``).

A frame is ``package.Class.method`` (``securemirror.source.SliceReader$Lane.row``); a marker matches a frame it is a
part of (``SliceReader$Lane.row`` does). ``scripts/bench --profile`` reads its samples here too (benchmarks/profile.py).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from secure_mirror import paths

# The job's per-record paths and the copy limit's, as NOTES sections 22 and 23 split them; first match wins.
PATHS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("settle: the consumer's position of every open range", ("SliceReader.settle",)),
    ("the source's rows: the headers", ("HeaderArray.of",)),
    ("the source's rows: the row", ("SliceReader$Lane.row",)),
    ("the consumer's poll", ("KafkaConsumer.poll",)),
    ("the producer's send", ("KafkaProducer.send", "KafkaProducer.doSend")),
    ("the producer's sender thread", ("Sender.run",)),
    ("the sink reading the row: its headers", ("MirrorDataWriter.ownHeaders", "MirrorDataWriter.keyText")),
    ("the sink reading the row: the rest", ("MirrorDataWriter.write",)),
    ("Spark's projections", ("UnsafeProjection", "GeneratedIteratorForCodegenStage", "ProjectExec")),
)
REST = "the rest (Spark's scheduling and planning, the start, other threads)"
# Whose code a compiled method is, by its class's package (first match wins).
OWNERS: tuple[tuple[str, str], ...] = (
    ("securemirror.", "the mirror's own"),
    ("org.apache.kafka.", "Kafka's clients"),
    ("org.apache.spark.", "Spark"),
    ("org.apache.hadoop.", "Hadoop"),
    ("scala.", "Scala"),
    ("java.", "the JDK"),
    ("javax.", "the JDK"),
    ("jdk.", "the JDK"),
    ("sun.", "the JDK"),
    ("com.sun.", "the JDK"),
)
STACK_DEPTH = 512  # frames read of each sample: enough for a path's marker under Spark's and Kafka's deep stacks
TOP_OWNERS = 12  # the owners --compilations prints, most time first
_DURATION = re.compile(r"^PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$")


def jfr_tool() -> str:
    """The JDK's ``jfr``, beside the ``java`` the project runs."""
    java = paths.java_executable()
    return str(Path(shutil.which(java) or java).resolve().parent / "jfr")


def _events(recording: Path, event: str, depth: int = STACK_DEPTH) -> list[dict]:
    printed = subprocess.run(
        [jfr_tool(), "print", "--json", "--stack-depth", str(depth), "--events", event, str(recording)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(printed.stdout)["recording"]["events"]


def _frame(method: dict) -> str:
    # JFR names classes as the JVM does (org/apache/...), hidden classes (lambdas) with dots: one spelling
    return f"{method['type']['name'].replace('/', '.')}.{method['name']}"


def stacks(
    recording: Path, since_ms: float | None = None, until_ms: float | None = None, depth: int = STACK_DEPTH
) -> list[list[str]]:
    """The stacks of the CPU samples (``jdk.ExecutionSample``), each frame ``package.Class.method`` from the running
    one down, at most ``depth`` frames; only those taken in [``since_ms``, ``until_ms``] (epoch milliseconds) when
    given."""
    out = []
    for event in _events(recording, "jdk.ExecutionSample", depth):
        values = event["values"]
        if since_ms is not None or until_ms is not None:
            taken = datetime.fromisoformat(values["startTime"].replace("Z", "+00:00")).timestamp() * 1000
            if (since_ms is not None and taken < since_ms) or (until_ms is not None and taken > until_ms):
                continue
        trace = values.get("stackTrace") or {}
        out.append([_frame(f["method"]) for f in trace.get("frames") or []])
    return out


def seconds(duration: str) -> float:
    """An ISO-8601 duration as ``jfr print --json`` writes it (``PT0.0123S``, ``PT1M2.5S``), in seconds."""
    match = _DURATION.match(duration)
    if match is None:
        raise ValueError(f"not a duration jfr prints: {duration!r}")
    hours, minutes, secs = match.groups()
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(secs or 0)


def compilations(recording: Path) -> list[tuple[str, str, float]]:
    """Every recorded compilation (``jdk.Compilation``): the compiled method as a frame is spelled
    (``package.Class.method``), the compiler (``c1``, ``c2``), and the seconds it took."""
    out = []
    for event in _events(recording, "jdk.Compilation"):
        values = event["values"]
        method = values.get("method") or {"type": {"name": "?"}, "name": "?"}
        out.append((_frame(method), values["compiler"], seconds(values["duration"])))
    return out


def path_of(stack: Sequence[str], table: Sequence[tuple[str, Sequence[str]]] = PATHS) -> str:
    """The first path of ``table`` whose marker is part of a frame, from the running frame down; else :data:`REST`."""
    for frame in stack:
        for name, markers in table:
            if any(marker in frame for marker in markers):
                return name
    return REST


def split(all_stacks: Iterable[Sequence[str]], table: Sequence[tuple[str, Sequence[str]]] = PATHS) -> Counter[str]:
    """How many samples each path of ``table`` (and :data:`REST`) holds."""
    return Counter(path_of(stack, table) for stack in all_stacks)


def within(all_stacks: Sequence[Sequence[str]], marker: str) -> float:
    """The share of samples with a frame that ``marker`` is part of."""
    if not all_stacks:
        return 0.0
    return sum(any(marker in frame for frame in stack) for stack in all_stacks) / len(all_stacks)


def owner(compiled: str) -> str:
    """Whose code a compiled method (``package.Class.method``) is, by :data:`OWNERS`; else the first three parts of
    its package."""
    for prefix, name in OWNERS:
        if compiled.startswith(prefix):
            return name
    parts = compiled.split(".")
    return ".".join(parts[:-2][:3]) or "(no package)"


def compile_seconds(compiled: Iterable[tuple[str, str, float]]) -> Counter[str]:
    """The compilations' seconds by whose code was compiled."""
    total: Counter[str] = Counter()
    for method, _compiler, took in compiled:
        total[owner(method)] += took
    return total


def report(recording: Path, frames: Sequence[str], with_compilations: bool) -> str:
    """The Markdown a recording's figures print as."""
    sampled = stacks(recording)
    counts = split(sampled)
    lines = [f"## {recording}", "", f"{len(sampled)} CPU samples", "", "| path | samples |", "| --- | --- |"]
    for name in [*(name for name, _ in PATHS), REST]:
        lines.append(f"| {name} | {100 * counts[name] / max(1, len(sampled)):.1f}% |")
    if frames:
        lines += ["", "| frames matching | samples |", "| --- | --- |"]
        lines += [f"| `{marker}` | {100 * within(sampled, marker):.1f}% |" for marker in frames]
    if with_compilations:
        compiled = compilations(recording)
        by_owner = compile_seconds(compiled)
        lines += ["", f"{len(compiled)} compilations, {sum(by_owner.values()):.1f} s", "", "| code | seconds |"]
        lines += ["| --- | --- |", *(f"| {name} | {took:.2f} |" for name, took in by_owner.most_common(TOP_OWNERS))]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recordings", description=__doc__.splitlines()[0])
    parser.add_argument("recordings", nargs="+", type=Path, help="Flight Recording files (.jfr)")
    parser.add_argument("--frames", default="", help="comma-separated markers: the share of samples in each")
    parser.add_argument("--compilations", action="store_true", help="the JIT's time by whose code it compiled")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.recordings if not p.is_file()]
    if missing:
        parser.error(f"no such recording: {', '.join(missing)}")
    markers = [m.strip() for m in args.frames.split(",") if m.strip()]
    print("\n\n".join(report(path, markers, args.compilations) for path in args.recordings))


if __name__ == "__main__":
    main()
