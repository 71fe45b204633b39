"""Helpers shared by the test suites (no tests here), imported as ``tests.support.<module>``:

- ``profiles``: profile data for unit tests, every referenced file created under a tmp_path;
- ``cluster``: unique topic names, ACL entries, grants that undo themselves, numbered records (sandbox tests);
- ``mirror_case``: a mirror of its own on the sandbox (topics, checkpoint, ACLs) and waiting for it;
- ``seeds``: seeded random schedules whose seed is printed, so a failure can be repeated.
"""
