"""The option files render wrote for the job (``profile/job_settings.py`` names them; ``job.json``'s shape is
``render/job_model.py``'s)."""

from __future__ import annotations

import json
from pathlib import Path

from secure_mirror.errors import EXIT_BAD_INPUT
from secure_mirror.profile.job_settings import JOB_FILE, SINK_OPTIONS_FILE, SOURCE_OPTIONS_FILE
from secure_mirror.render.job_model import JobFileError, JobSettings
from secure_mirror.run.job.outcome import JobRefused

RENDER_AGAIN = "render the profile again (secure-mirror render) and run the spark-submit.sh of that folder"


def read_options(options_dir: Path) -> tuple[dict, dict, JobSettings]:
    """(source options, sink options, the job's settings); refused (exit 2) when a file is missing, or job.json is
    not of this version's shape."""
    source, sink = (json.loads(_text(options_dir / name)) for name in (SOURCE_OPTIONS_FILE, SINK_OPTIONS_FILE))
    job = options_dir / JOB_FILE
    try:
        return source, sink, JobSettings.from_json(_text(job))
    except JobFileError as exc:
        raise JobRefused(
            f"{job} is not what this secure-mirror writes: {exc}; {RENDER_AGAIN}", EXIT_BAD_INPUT
        ) from None


def _text(path: Path) -> str:
    if not path.exists():
        raise JobRefused(f"{path} is missing; {RENDER_AGAIN}", EXIT_BAD_INPUT)
    return path.read_text(encoding="utf-8")


def kafka_properties(jvm, options: dict):
    """java.util.Properties of a Kafka client from ``kafka.``-prefixed Spark options."""
    props = jvm.java.util.Properties()
    for key, value in options.items():
        if key.startswith("kafka."):
            props.setProperty(key[len("kafka.") :], str(value))
    return props
