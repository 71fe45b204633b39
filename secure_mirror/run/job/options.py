"""The option files render wrote for the job (``profile/job_settings.py`` names them)."""

from __future__ import annotations

import json
from pathlib import Path

from secure_mirror.errors import EXIT_BAD_INPUT
from secure_mirror.profile.job_settings import JOB_FILE, SINK_OPTIONS_FILE, SOURCE_OPTIONS_FILE
from secure_mirror.run.job.outcome import JobRefused


def read_options(options_dir: Path) -> tuple[dict, dict, dict]:
    def load(name: str) -> dict:
        path = options_dir / name
        if not path.exists():
            raise JobRefused(
                f"{path} is missing; render the profile again (secure-mirror render) and run the "
                "spark-submit.sh of that folder",
                EXIT_BAD_INPUT,
            )
        return json.loads(path.read_text(encoding="utf-8"))

    return load(SOURCE_OPTIONS_FILE), load(SINK_OPTIONS_FILE), load(JOB_FILE)


def kafka_properties(jvm, options: dict):
    """java.util.Properties of a Kafka client from ``kafka.``-prefixed Spark options."""
    props = jvm.java.util.Properties()
    for key, value in options.items():
        if key.startswith("kafka."):
            props.setProperty(key[len("kafka.") :], str(value))
    return props
