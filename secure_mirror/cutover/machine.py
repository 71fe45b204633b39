"""The cut-over's driver, shared by ``cutover`` and ``failback``: run the steps of the record's direction from the
first not done, record each before and after it runs, stop at the first that fails, and write the report either way
(it says which step stopped, and why)."""

from __future__ import annotations

from secure_mirror.cutover import report, state, steps
from secure_mirror.errors import EXIT_FAILED, EXIT_OK, SecureMirrorError


def drive(ctx: steps.Context) -> int:
    """Exit 0 when every step is done (or was before), 1 when a step stopped (its sentence says what to fix), or the
    exit code of the error that stopped it."""
    record = ctx.record
    # complete: no step runs, and the report below is written again (a run killed after its last step was recorded
    # left the report that step wrote, which shows it still begun)
    if record.complete:
        ctx.say(f"the cut-over recorded in {ctx.run_dir / state.FILE} is complete; nothing to do")
    code = EXIT_OK
    while (name := record.next_step()) is not None:
        resumed = record.step(name).attempts > 0
        record.begin(name, state.now())
        ctx.save()
        ctx.say(f"{name}: {'again, ' if resumed else ''}started")
        try:
            result = steps.STEPS[name](ctx)
        except steps.StepFailed as failed:
            record.fail(name, state.now(), str(failed), failed.result)
            code = EXIT_FAILED
        except SecureMirrorError as error:
            record.fail(name, state.now(), str(error))
            code = error.exit_code if error.exit_code != EXIT_OK else EXIT_FAILED
        else:
            record.finish(name, state.now(), result)
            ctx.save()
            ctx.say(f"{name}: done")
            continue
        ctx.save()
        ctx.say(f"{name}: stopped: {record.step(name).message}")
        ctx.say(f"fix that, then run the same command again: it goes on from {name}")
        break
    steps.write_report(ctx)
    ctx.say(f"report: {ctx.run_dir / steps.REPORT_JSON}, {ctx.run_dir / steps.REPORT_MD}")
    return code


def json_text(record: state.Record) -> str:
    """The report as ``--json`` prints it."""
    return report.json_report(record).rstrip("\n")
