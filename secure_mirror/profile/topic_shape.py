"""A target topic's shape against its source's: which topic configs to copy and sync, and what to do when their
partition counts differ (docs/replica.md). Pure decisions over plain data: the job's planner, pre-flight and verify
ask the clusters and judge with these."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from secure_mirror.profile import javaregex

# MirrorMaker 2's config.properties.exclude default (DefaultConfigPropertyFilter, Kafka 4.2): Java regexes, whole name.
MM2_EXCLUDED_CONFIGS = (
    r"follower\.replication\.throttled\.replicas",
    r"leader\.replication\.throttled\.replicas",
    r"message\.timestamp\.difference\.max\.ms",
    r"message\.timestamp\.type",
    r"unclean\.leader\.election\.enable",
    r"min\.insync\.replicas",
)
SET_ON_TOPIC = "DYNAMIC_TOPIC_CONFIG"  # a ConfigEntry's source when the topic itself sets it (not a default)


@dataclass(frozen=True)
class ConfigEntry:
    """One entry of a topic's describeConfigs answer, as plain data."""

    name: str
    value: str | None
    source: str  # ConfigEntry.ConfigSource's name: DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG, STATIC_BROKER_CONFIG, ...


@dataclass(frozen=True)
class ConfigChange:
    """An incremental alter op on the target topic: SET ``name`` to ``value``, or DELETE it (back to the target's
    default)."""

    op: Literal["SET", "DELETE"]
    name: str
    value: str | None = None


@functools.cache
def _pattern(exclude: tuple[str, ...]) -> re.Pattern[str] | None:
    return javaregex.compile_java("|".join(f"(?:{item})" for item in exclude)) if exclude else None


def excluded(name: str, exclude: Iterable[str]) -> bool:
    """Whether a config name is excluded: it matches one of ``exclude`` whole (Java regexes, as MirrorMaker 2's)."""
    pattern = _pattern(tuple(exclude))
    return pattern is not None and pattern.fullmatch(name) is not None


def configs_to_copy(source_entries: Iterable[ConfigEntry], exclude: Iterable[str]) -> dict[str, str]:
    """The source topic's own configs (set on the topic, not defaults) that are not excluded: those the target topic
    is created with, and kept in step with."""
    exclude = tuple(exclude)
    return {
        entry.name: entry.value
        for entry in source_entries
        if entry.source == SET_ON_TOPIC and entry.value is not None and not excluded(entry.name, exclude)
    }


def config_changes(
    source: Iterable[ConfigEntry], target: Iterable[ConfigEntry], exclude: Iterable[str]
) -> list[ConfigChange]:
    """What makes the target topic's own configs those of the source (less ``exclude``): SET what differs, DELETE
    what the target sets and the source no longer does (the target's default then applies, as MirrorMaker 2's
    ``use.defaults.from: target``). Excluded configs are left alone on the target."""
    exclude = tuple(exclude)
    wanted = configs_to_copy(source, exclude)
    have = configs_to_copy(target, exclude)
    changes = [ConfigChange("SET", name, value) for name, value in sorted(wanted.items()) if have.get(name) != value]
    changes += [ConfigChange("DELETE", name) for name in sorted(have) if name not in wanted]
    return changes


PartitionAction = Literal["same", "grow", "more"]


def partition_growth(source_count: int, target_count: int) -> PartitionAction:
    """``grow`` when the target has fewer partitions than the source (add them, before a record of a new partition is
    written), ``more`` when it has more (Kafka never removes partitions: reported, never changed), else ``same``."""
    if target_count < source_count:
        return "grow"
    return "more" if target_count > source_count else "same"


def partition_problem(
    source_topic: str, target_topic: str, source_count: int, target_count: int, may_grow: bool
) -> tuple[str, str] | None:
    """What is wrong and the fix, when the target's partition count is not the source's and will not become it: more
    partitions than the source, or fewer that the mirror may not add (None when they agree or the job grows them)."""
    action = partition_growth(source_count, target_count)
    if action == "more":
        return (
            f"target topic {target_topic} has {target_count} partitions and {source_topic} has {source_count}, and "
            "Kafka removes no partitions: records do not keep their partition numbers",
            f"recreate {target_topic} with {source_count} partitions (or add partitions to the source topic)",
        )
    if action == "grow" and not may_grow:
        return (
            f"target topic {target_topic} has {target_count} partitions and {source_topic} has {source_count}, and "
            "the mirror will not add them",
            f"add partitions to it (kafka-topics.sh --alter --topic {target_topic} --partitions {source_count}), or "
            "keep mirror.topic_shape.grow_partitions on with keep_partition true or auto and grant the mirror "
            "identity ALTER on it",
        )
    return None
