"""``secure-mirror cutover`` or ``failback`` with a breakpoint inside one step, so that a test can SIGKILL it there
(tests/integration/test_cutover.py, issue 58 point 6). Run as a program::

    python -m tests.integration.cutover_breakpoint --step promote --after 1 [--split] --marker M -- cutover PROFILE ...
    python -m tests.integration.cutover_breakpoint --step restore --after-move --marker M -- failback PROFILE ...

It runs the command in this process, as ``python -m secure_mirror`` would, with one difference: while ``--step`` is
the step the record shows started, every ACL change the step asks of a cluster (``admin_ops.create_acls`` or
``delete_acls`` with at least one binding, through ``Context.ask``) is counted, and once ``--after`` of them have
returned (or, with ``--after-move``, once the restore step has moved the forward cut-over's record aside) it writes
``--marker`` (JSON: the step, this pid, the changes applied so far) and waits, doing nothing, for the test's
SIGKILL. That is a kill landing at that exact point of the step: nothing of the step runs after it.

``--split`` sends the step's bindings one request each instead of all in one request. The product's promote sends
its bindings in ONE CreateAcls request, whose records the KRaft controller writes as one atomic batch (Kafka 4.2's
``AclControlManager.createAcls`` returns an atomic ``ControllerResult``), so a kill of the unmodified command lands
with none or all of them applied; with ``--split`` the test can stop it with some of them applied, a state a re-run
must also finish exactly. The requests of restore (one create and one delete per cluster) are the
product's own: a breakpoint between two of them needs no split.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from secure_mirror import cli
from secure_mirror.cutover import context, steps
from secure_mirror.cutover import record as records
from secure_mirror.kafka import admin_ops
from secure_mirror.kafka.acl import Acl

CHANGES = {admin_ops.create_acls: "added", admin_ops.delete_acls: "removed"}


def current_step(record: records.Record) -> str | None:
    return next((s.name for s in record.steps if s.status == records.STARTED), None)


def pause(marker: Path, step: str, applied: list[dict], at: str) -> None:
    """Say where we stopped (written whole, then renamed into place), then wait for the SIGKILL."""
    text = json.dumps({"step": step, "pid": os.getpid(), "at": at, "applied": applied}, indent=2)
    partial = marker.with_name(f".{marker.name}.tmp")
    partial.write_text(text + "\n")
    os.replace(partial, marker)
    sys.stdout.flush()
    while True:
        time.sleep(60)


def install(step: str, after: int | None, after_move: bool, split: bool, marker: Path) -> None:
    original_ask, original_replace = context.Context.ask, os.replace
    applied: list[dict] = []
    here: dict[str, context.Context] = {}

    def ask(self, side, fn, *args, who=context.ADMIN, **kwargs):
        here["ctx"] = self
        if current_step(self.record) != step or fn not in CHANGES or not args or not args[0]:
            return original_ask(self, side, fn, *args, who=who, **kwargs)
        bindings, rest = list(args[0]), args[1:]
        for piece in [[b] for b in bindings] if split else [bindings]:
            original_ask(self, side, fn, piece, *rest, who=who, **kwargs)
            applied.append({"cluster": side, "change": CHANGES[fn], "bindings": [Acl.of(b).to_dict() for b in piece]})
            if after is not None and len(applied) == after:
                pause(marker, step, applied, f"after ACL request {after} of the step")
        return None

    def replace(src, dst, *args, **kwargs):
        original_replace(src, dst, *args, **kwargs)
        ctx = here.get("ctx")
        moved = Path(dst).name.startswith("cutover-") and Path(dst).suffix == ".json"
        if after_move and moved and ctx is not None and current_step(ctx.record) == step:
            pause(marker, step, applied, f"after the forward record was kept as {dst}")

    context.Context.ask = ask  # type: ignore[method-assign]
    if after_move:
        os.replace = replace  # type: ignore[assignment]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cutover_breakpoint")
    parser.add_argument(
        "--step", required=True, choices=[*steps.names(records.CUTOVER), *steps.names(records.FAILBACK)]
    )
    parser.add_argument("--after", type=int, help="pause once this many ACL requests of the step have returned")
    parser.add_argument("--after-move", action="store_true", help="pause once restore kept the forward record")
    parser.add_argument("--split", action="store_true", help="one request per binding")
    parser.add_argument("--marker", required=True, type=Path)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if (args.after is None) == (not args.after_move):
        parser.error("name one breakpoint: --after N or --after-move")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    install(args.step, args.after, args.after_move, args.split, args.marker)
    return cli.main(command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
