"""A benchmark's results files: ``<out>/<name>.json``, the result with the build the run started from among it
(``build``, benchmarks/harness/provenance.py), and ``<out>/<name>.md``, its report with that build said under the
title (:func:`write_results`); and the main of a benchmark on the sandbox that writes them (:func:`results_main`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.harness import cli, provenance


def write_results(out: Path, name: str, result: dict, markdown: str) -> str:
    """Write ``result`` and the report ``markdown``, stamped with ``result["build"]``, into ``out``; the report."""
    report = provenance.stamped(markdown, result["build"])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2))
    (out / f"{name}.md").write_text(report)
    return report


def results_main(argv: list[str] | None, description: str, flag: str, name: str, run, markdown) -> int:
    """The main of a benchmark on the sandbox that writes ``<out>/<name>.{json,md}``: ``--seed``, ``--sandbox``,
    ``--out``; ``run(args, command)`` gets the command that repeats it (``scripts/bench <flag> ...``, the seed drawn
    added) and returns the result, which ``markdown`` makes readable. The result records the build the run started
    from (``build``), and the report says it under its title."""
    parser = argparse.ArgumentParser(prog=f"scripts/bench {flag}", description=description)
    cli.add_seed_option(parser)
    cli.add_sandbox_option(parser)
    cli.add_out_option(parser)
    args = parser.parse_args(argv)
    cli.stop_on_sigterm()
    given = cli.given(argv)
    args.seed = cli.drawn_seed(args.seed, given)
    build = provenance.build()
    result = {"build": build, **run(args, " ".join(["scripts/bench", flag, *given]))}
    print(write_results(args.out, name, result, markdown(result)))
    return 0
