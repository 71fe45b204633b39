"""Helpers shared by the test suites (no tests here), imported as ``tests.support.<module>``:

- ``profiles``: profile data for unit tests, every referenced file created under a tmp_path;
- ``cluster``: unique topic names, ACL entries, grants that undo themselves, numbered records (sandbox tests);
- ``mirror_case``: a mirror of its own on the sandbox (topics, checkpoint, ACLs), stopped as a crash would;
- ``seeds``: seeded random schedules whose seed is printed, so a failure can be repeated.

What the benchmarks use too lives where they can import it (they import nothing from here): waiting for a mirror and
this checkout's sink in ``secure_mirror/sandbox`` (``waiting``, ``sink_jar``), the results files' build and the
transactions a test writes in ``benchmarks/harness`` (``provenance``, ``load.produce_transactions``).
"""
