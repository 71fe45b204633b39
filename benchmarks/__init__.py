"""The benchmarks: scenarios measured on the sandbox, side by side with MirrorMaker 2 and a copy limit, and their
results (benchmarks/results/, read in benchmarks/NOTES.md). ``scripts/bench`` runs them.

- ``harness/``: what every scenario stands on: the command's options and log (``cli``), the session and its work
  folder (``session``), one sandbox's profiles, grants, topics and clocks (``bench``), the contenders' table and
  command lines (``contenders``, ``launch``), CPU from /proc (``cpu``), data in and figures out (``load``,
  ``reading``, ``committed``, ``admin``), one summary of repeats (``summary``) and the results files with the build
  they were made at (``results``, ``provenance``);
- one module or folder per scenario: ``comparison/`` (``scripts/bench``), ``scale/`` (``--scale``), ``failover/``
  (``--failover``), ``cutover/`` (``--cutover``), ``first_index`` (``--first-index``), ``tuning`` (``--tuning``),
  ``profile`` (``--profile``), ``preflight_scale`` (run as a script) and ``recordings`` (``python -m
  benchmarks.recordings``, a Flight Recording's samples split).

The harness imports no scenario, and nothing here imports the tests (tests/unit/test_layers.py).
"""
