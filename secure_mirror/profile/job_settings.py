"""Facts derived from the profile for the mirror job, besides the Kafka options: the rename rule as pieces for a
Spark expression, the partition policy, provenance headers, and the profile's fingerprint that guards the checkpoint.

Render writes them to ``spark/job.json`` next to the rendered option files (no secrets in it) and the job reads them
there; the launcher and verify use them directly. They live with the profile so that every layer imports them from
below.
"""

from __future__ import annotations

import hashlib
import json

from secure_mirror.profile.models import Profile

JOB_FILE = "job.json"
FINGERPRINT_FILE = "secure-mirror-fingerprint.json"
PROVENANCE_PREFIX = "secure-mirror."  # provenance header names start with this; verify ignores them


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


def job_settings(profile: Profile) -> dict:
    """The content of ``spark/job.json``."""
    settings = fingerprint_settings(profile)
    return {
        "target_topic_pieces": profile.target_topic_pieces,
        "keep_partition": profile.mirror.keep_partition,
        "provenance_headers": profile.mirror.provenance_headers,
        "source_alias": profile.source.alias,
        "checkpoint_location": profile.mirror.checkpoint_location,
        "fingerprint": {"sha256": fingerprint(settings), "settings": settings},
    }


def job_json(profile: Profile) -> str:
    return json.dumps(job_settings(profile), indent=2) + "\n"
