"""``mirror.topic_shape``'s needs (docs/replica.md): what the mirror identity needs on the topics to give the target
topics the source's configs and partitions. The job's plans (``render.acls.job``) add them to the topic grants;
pre-flight and the audit judge the same operations from here."""

from __future__ import annotations

from secure_mirror.profile.models import Profile

SHAPE_SOURCE_CONFIG_OPERATIONS = ("DESCRIBE_CONFIGS",)  # read the source topics' own configs
SHAPE_TARGET_CONFIG_OPERATIONS = ("ALTER_CONFIGS",)  # set them on the target topics (Kafka implies DESCRIBE_CONFIGS)
SHAPE_TARGET_GROW_OPERATIONS = ("ALTER",)  # CreatePartitions on the target topics


def shape_source_operations(profile: Profile) -> tuple[str, ...]:
    """What the source topics need beyond READ and DESCRIBE: DESCRIBE_CONFIGS with config sync."""
    return SHAPE_SOURCE_CONFIG_OPERATIONS if profile.mirror.topic_shape.sync_configs else ()


def shape_target_operations(profile: Profile) -> tuple[str, ...]:
    """What the target topics need: ALTER_CONFIGS with config sync, ALTER with growth."""
    shape = profile.mirror.topic_shape
    return (SHAPE_TARGET_CONFIG_OPERATIONS if shape.sync_configs else ()) + (
        SHAPE_TARGET_GROW_OPERATIONS if profile.mirror.grows_partitions else ()
    )


def shape_note(side: str, profile: Profile) -> str | None:
    """Why a side's topic grants hold the topic shape's operations, in words; None when they hold none."""
    operations = shape_source_operations(profile) if side == "source" else shape_target_operations(profile)
    if not operations:
        return None
    return (
        f"Topic shape: {' + '.join(operations)} on the {side} topics (mirror.topic_shape: the target topics take the "
        "source topics' own configs and partition counts, docs/replica.md)."
    )
