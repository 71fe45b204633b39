"""The cut-over's driver, shared by ``cutover`` and ``failback``: run the steps of the record's direction from the
first not done, record each before and after it runs, stop at the first that fails, and write the report either way
(it says which step stopped, and why). A dry run prints the steps' previews, in the same order, and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from secure_mirror.cutover import report, steps
from secure_mirror.cutover.context import Context, Reading, StepFailed
from secure_mirror.cutover.record import FILE, Command, Record, RecordFile, now
from secure_mirror.errors import EXIT_FAILED, EXIT_OK, SecureMirrorError


def record_file(folder: Path) -> RecordFile:
    """The record kept in ``folder`` (``cutover.json``), read against the step tables."""
    return RecordFile(folder / FILE, steps.names)


def open_record(folder: Path, key: Command, dry_run: bool) -> tuple[Record, Callable[[], None]]:
    """The record of the cut-over ``key`` kept in ``folder`` (a new one when there is none) and how to save it; for
    a dry run a new one that is never saved (nothing is read or written)."""
    if dry_run:
        return Record.start(key, steps.names(key.direction)), lambda: None
    store = record_file(folder)
    record = store.resume(key)
    return record, lambda: store.save(record)


def drive(ctx: Context) -> int:
    """Exit 0 when every step is done (or was before), 1 when a step stopped (its sentence says what to fix), or the
    exit code of the error that stopped it."""
    record, table = ctx.record, {step.name: step for step in steps.of(ctx.direction)}
    # complete: no step runs, and the report below is written again (a run killed after its last step was recorded
    # left the report that step wrote, which shows it still begun)
    if record.complete:
        ctx.say(f"the cut-over recorded in {ctx.run_dir / FILE} is complete; nothing to do")
    code = EXIT_OK
    while (name := record.next_step()) is not None:
        resumed = record.step(name).attempts > 0
        record.begin(name, now())
        ctx.save()
        ctx.say(f"{name}: {'again, ' if resumed else ''}started")
        try:
            result = table[name].run(ctx)
        except StepFailed as failed:
            record.fail(name, now(), str(failed), failed.result)
            code = EXIT_FAILED
        except SecureMirrorError as error:
            record.fail(name, now(), str(error))
            code = error.exit_code if error.exit_code != EXIT_OK else EXIT_FAILED
        else:
            record.finish(name, now(), result)
            ctx.save()
            ctx.say(f"{name}: done")
            continue
        ctx.save()
        ctx.say(f"{name}: stopped: {record.step(name).message}")
        ctx.say(f"fix that, then run the same command again: it goes on from {name}")
        break
    report.write(record, ctx.run_dir)
    ctx.say(f"report: {ctx.run_dir / report.JSON_FILE}, {ctx.run_dir / report.MARKDOWN_FILE}")
    return code


def dry_run(ctx: Context) -> int:
    """What each step would do, from what both clusters hold now (read once for every preview): each step's preview,
    in the order the steps run. Exit 1 when a step would stop on what the clusters hold (the fence could not stop a
    producer), else 0."""
    ctx.say("dry run: nothing is changed or written")
    reading, refused = Reading(ctx), False
    for step in steps.of(ctx.direction):
        shown = step.preview(ctx, reading)
        for line in shown.lines:
            ctx.say(f"{step.name}: {line}")
        refused = refused or shown.refused
    return EXIT_FAILED if refused else EXIT_OK


def json_text(record: Record) -> str:
    """The report as ``--json`` prints it."""
    return report.json_report(record).rstrip("\n")
