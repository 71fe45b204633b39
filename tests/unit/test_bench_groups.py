"""The groups benchmark's pass figures, read from a job's metrics file (pure; the benchmark itself runs live)."""

from __future__ import annotations

import json

from benchmarks.groups.contender import Contender


def _contender(tmp_path, passes: list[dict]) -> Contender:
    contender = Contender.__new__(Contender)  # only its run folder is read here
    contender.run_dir = tmp_path
    lines = [json.dumps({"group_sync": p}) for p in passes] + [json.dumps({"other": 1})]
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return contender


def test_the_pass_figures_take_medians_of_the_incremental_passes_and_of_each_phase(tmp_path):
    passes = [
        {"seconds": 30.0, "full": True, "planned": 10_000, "groups": 10_000},  # a build that said no phases
        {"seconds": 5.0, "full": False, "planned": 800, "groups": 10_000,
         "phases": {"source": 1.5, "target": 0.5, "write": 2.5}},
        {"seconds": 7.0, "full": False, "planned": 900, "groups": 10_000,
         "phases": {"source": 2.5, "target": 1.5, "write": 2.0}},
        {"seconds": 6.0, "full": False, "planned": 850, "groups": 10_000,
         "phases": {"source": 2.0, "target": 1.0, "write": 3.0}},
    ]  # fmt: skip
    figures = _contender(tmp_path, passes).pass_figures()
    assert (figures["passes"], figures["incremental_median_seconds"], figures["full_median_seconds"]) == (4, 6.0, 30.0)
    assert figures["planned_median"] == 850 and figures["groups"] == 10_000
    assert figures["phase_medians_seconds"] == {"source": 2.0, "target": 1.0, "write": 2.5}


def test_a_run_whose_passes_said_no_phases_has_none(tmp_path):
    passes = [{"seconds": 4.0, "full": False, "planned": 1, "groups": 1}]
    assert _contender(tmp_path, passes).pass_figures()["phase_medians_seconds"] == {}
