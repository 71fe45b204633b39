"""``secure-mirror run`` maps the driver JVM's class-data archive when its cache holds one (secure_mirror/run/
class_cache.py), judged by the JVM's own class-loading log, not by what ``run`` says it did.

The session's warm-up job wrote the tests' archive with the product's cache (tests/support/jvm_starts.py); here a run
is pointed at that folder, with the tests' own archive option taken out of ``SPARK_SUBMIT_OPTS`` and the JVM's
``class+load`` log added: the classes the JVM took from the archive are those it logs with ``source: shared objects
file (top)`` (the top layer: the dynamic archive; the JDK's own archive is the base). ``run --json`` keeps stdout to its
own lines while the archive is in use; ``doctor`` names the same archive. The archive a run writes, and that it holds
no secret, are judged in tests/reliability/test_secret_leaks.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from secure_mirror.errors import EXIT_OK
from secure_mirror.run import class_cache
from secure_mirror.run.json_lines import is_run_line
from tests.support import jvm_starts
from tests.support.mirror_case import MirrorCase

pytestmark = [pytest.mark.sandbox, pytest.mark.spark]
FROM_THE_ARCHIVE = "source: shared objects file (top)"


def test_a_run_maps_the_archive_in_its_cache_and_keeps_stdout_to_its_lines(sandbox, tmp_path):
    archive = jvm_starts._archive_path()
    if archive is None or not archive.exists():
        pytest.fail(
            f"no tests' archive at {archive} (the session's warm-up writes it unless SPARK_SUBMIT_OPTS is set by hand: "
            f"{os.environ.get('SPARK_SUBMIT_OPTS')!r})",
            pytrace=False,
        )
    loads = tmp_path / "class-load.log"
    options = jvm_starts.without_archive(os.environ.get("SPARK_SUBMIT_OPTS", ""))
    env = {
        **os.environ,
        class_cache.CACHE_VARIABLE: str(archive.parent),
        "SPARK_SUBMIT_OPTS": " ".join([*options, f"-Xlog:class+load=info:file={loads}"]),
    }
    with MirrorCase(sandbox, tmp_path) as case:
        case.create({"a": 1})
        case.produce("a", [{"key": b"k%d" % i, "value": b"v"} for i in range(20)])
        run = subprocess.run(
            case.run_argv(tmp_path / "run", "--until-caught-up", "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == EXIT_OK, run.stderr[-3000:]
    said = (tmp_path / "run" / "job.log").read_text()
    assert f"driver's class-data archive: {archive}\n" in said, said[:2000]
    lines = run.stdout.splitlines()
    assert lines and all(is_run_line(line) for line in lines), run.stdout[-3000:]
    assert json.loads(lines[-1])["status"] == "caught-up"
    loaded = loads.read_text().splitlines()
    mapped = [line for line in loaded if FROM_THE_ARCHIVE in line]
    print(f"{len(mapped)} of {len(loaded)} classes loaded came from {archive}")
    assert len(mapped) > 1000, f"{len(mapped)} of {len(loaded)} classes came from the archive; see {loads}"
    # doctor names the archive run maps
    doctor = subprocess.run(
        [sys.executable, "-m", "secure_mirror", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    [item] = [i for i in json.loads(doctor.stdout)["items"] if i["name"] == "the driver's class-data archive"]
    assert item["found"].startswith(f"{archive} ("), item
