"""The summary of a contender's repeated runs, one for every benchmark that repeats them: each figure's median,
minimum and maximum (:func:`spread`), over the runs that finished, or over every run that measured it when none did
(:func:`summarize`)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def spread(values: list[float]) -> dict:
    """The median, minimum and maximum of ``values`` and how many there are."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def summarize(runs: list[dict], figures: Iterable[str]) -> dict:
    """One contender's runs: how many ran, finished, failed (``error``); per figure of ``figures`` its :func:`spread`
    over the runs that finished, or over all that measured it when none did (``over``). A run without ``finished``
    (the comparison's: a run that did not finish raised) counts as measured."""
    measured = [r for r in runs if "error" not in r]
    finished = [r for r in measured if r.get("finished")]
    over = finished or measured
    out: dict = {"runs": len(runs), "finished": len(finished), "errors": len(runs) - len(measured)}
    out["over"] = "finished" if finished else "unfinished"
    for key in figures:
        if values := [r[key] for r in over if r.get(key) is not None]:
            out[key] = spread(values)
    return out
