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


def test_the_passes_after_the_catch_up_have_their_own_medians_and_each_pass_is_kept(tmp_path):
    passes = [
        {"time": 100.0, "seconds": 9.0, "full": False, "planned": 1000, "groups": 10_000,
         "phases": {"source": 4.0, "target": 2.0, "plan": 1.0, "write": 2.0}},  # while the job caught up
        {"time": 121.0, "seconds": 20.0, "full": True, "planned": 10_000, "groups": 10_000,
         "phases": {"source": 4.0, "target": 8.0, "plan": 5.0, "write": 3.0}},
        {"time": 126.0, "seconds": 4.0, "full": False, "planned": 900, "groups": 10_000,
         "phases": {"source": 2.0, "target": 1.0, "plan": 0.5, "write": 0.5}},
        {"time": 131.0, "seconds": 3.0, "full": False, "planned": 800, "groups": 10_000,
         "phases": {"source": 1.0, "target": 1.0, "plan": 0.5, "write": 0.5}},
    ]  # fmt: skip
    # the first pass started at 91, the rest after 95
    figures = _contender(tmp_path, passes).pass_figures(caught_up=95.0)
    assert figures["incremental_median_seconds"] == 4.0 and figures["steady_incremental_median_seconds"] == 3.5
    assert figures["steady_passes"] == 3
    assert figures["steady_phase_medians_seconds"] == {"source": 1.5, "target": 1.0, "plan": 0.5, "write": 0.5}
    assert [p["seconds"] for p in figures["each"]] == [9.0, 20.0, 4.0, 3.0] and figures["each"][1]["full"]
    assert _contender(tmp_path, passes).pass_figures()["steady_incremental_median_seconds"] is None
