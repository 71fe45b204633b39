"""What the mirror job and the layers around it agree on: the names of the files the job reads (render writes
them, the job and the launcher find them), the provenance header prefix, and the profile's fingerprint that guards
the checkpoint. ``render/job_file.py`` writes ``spark/job.json`` from these and the profile's derived facts; the job,
the launcher, lag and verify read them here, so every layer imports them from below.
"""

from __future__ import annotations

import hashlib
import json

from secure_mirror.profile.models import Profile

SOURCE_OPTIONS_FILE = "source-options.json"  # spark.readStream options, with the source identity
SINK_OPTIONS_FILE = "sink-options.json"  # writeStream options, with the target identity
JOB_FILE = "job.json"  # the job's own settings (render/job_file.py), no secrets
OPTION_FILES = (SOURCE_OPTIONS_FILE, SINK_OPTIONS_FILE, JOB_FILE)  # what the job reads (cluster mode ships them)
FINGERPRINT_FILE = "secure-mirror-fingerprint.json"
PROVENANCE_PREFIX = "secure-mirror."  # provenance header names start with this; verify ignores them
UNTIL_CAUGHT_UP_CONTINUOUS = (  # refused by the launcher, and by the job when started without it
    "--until-caught-up runs micro-batches up to the source's end, and the profile's mirror.spark.trigger is "
    "continuous (a query that never ends); drop --until-caught-up, or set mirror.spark.trigger: micro_batch"
)


def fingerprint_settings(profile: Profile) -> dict:
    """The settings a checkpoint belongs to: change any of them and the stored offsets mean something else."""
    mirror = profile.mirror
    return {
        "source_alias": profile.source.alias,
        "target_alias": profile.target.alias,
        "topics_include": mirror.topics.include,
        "topics_exclude": mirror.topics.exclude,
        "rename_rule": mirror.rename.rule,
        "rename_template": mirror.rename.template,
    }


def fingerprint(settings: dict) -> str:
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def profile_fingerprint(profile: Profile) -> dict:
    """``{"sha256": ..., "settings": ...}``: what the job stores next to the checkpoint and the launcher checks."""
    settings = fingerprint_settings(profile)
    return {"sha256": fingerprint(settings), "settings": settings}
