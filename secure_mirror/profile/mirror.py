"""What flows and how (the ``mirror`` section): the topics and their target names, consumer groups, heartbeats and the
target topics' shape; ``mirror.delivery`` is :mod:`.delivery`'s, ``mirror.spark`` and ``mirror.mm2`` the runtime's
(:mod:`.runtime`)."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from secure_mirror.profile import groups, policy, topic_shape, topics
from secure_mirror.profile.base import Strict
from secure_mirror.profile.delivery import Delivery
from secure_mirror.profile.fields import Problem
from secure_mirror.profile.runtime import MirrorMaker2, Spark


class Topics(Strict):
    include: str = Field(min_length=1, description="Java regexes; a comma means 'or'")
    exclude: str | None = Field(
        None,
        description="Java regexes; internal and reserved topics (__*, *.internal, *.replica, heartbeats, Connect's and "
        "Schema Registry's) are always excluded",
    )
    grant_all_topics: bool = Field(
        False,
        description="with include .*: render ACLs on every topic (TOPIC '*', which covers Kafka's internal topics "
        "too: __consumer_offsets, __transaction_state); without it such a selection is refused",
    )

    @field_validator("include", "exclude")
    @classmethod
    def _patterns(cls, value: str | None) -> str | None:
        problems = [p for piece in topics.split_patterns(value or "") if (p := topics.check_pattern(piece))]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    def selection(self) -> topics.TopicSelection:
        return topics.TopicSelection.parse(self.include, self.exclude)


TEMPLATE_FIELDS = {"topic", "source_alias", "target_alias"}


class Rename(Strict):
    rule: Literal["identity", "alias_prefix", "template"] = "alias_prefix"
    template: str | None = Field(None, description="with rule template: e.g. mirror.{topic}")

    @field_validator("template")
    @classmethod
    def _template(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("rule") == "template":
            _check_template(value)
        elif value is not None:
            raise ValueError("template is only used with rule: template; set the rule or drop the template")
        return value

    @property
    def template_text(self) -> str:
        """The rule as a template: ``{topic}`` (identity), ``{source_alias}.{topic}`` (alias_prefix), or the template."""
        if self.rule == "identity":
            return "{topic}"
        if self.rule == "alias_prefix":
            return "{source_alias}.{topic}"
        assert self.template is not None  # _template refuses rule: template without one
        return self.template

    @property
    def mm2_separator(self) -> str | None:
        """The separator of MirrorMaker 2's DefaultReplicationPolicy that names topics as this rule does
        (``{source_alias}<separator>{topic}``), or None when none does (identity, or another template)."""
        template = self.template_text
        if template.startswith("{source_alias}") and template.endswith("{topic}"):
            separator = template.removeprefix("{source_alias}").removesuffix("{topic}")
            return separator if separator and "{" not in separator else None
        return None


def _check_template(template: str | None) -> None:
    if not template:
        raise ValueError("rule template needs a template, e.g. mirror.{topic}")
    how = "use placeholders {topic}, {source_alias}, {target_alias}"
    try:
        fields = [
            (name, spec, conversion)
            for _, name, spec, conversion in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError as exc:
        raise ValueError(f"template does not parse ({exc}); {how}") from None
    for name, spec, conversion in fields:
        # Only bare names: a format spec ({topic:>999999999}) or conversion would run for every topic.
        if name not in TEMPLATE_FIELDS or spec or conversion:
            shown = name if len(name) <= 40 else name[:40] + "..."
            raise ValueError(
                f"template does not parse (placeholder {{{shown}}} is not one of ours, or has a "
                f"format spec or conversion); {how}"
            )
    if "topic" not in {name for name, _, _ in fields}:
        raise ValueError("template must contain {topic}, or every topic would land in the same target topic")
    if not topics.LEGAL_TOPIC.match(template.format(topic="t", source_alias="s", target_alias="d")):
        raise ValueError("template yields illegal topic names; use only letters, digits, '.', '_' and '-'")


KeepPartition = Literal["auto"] | bool


MM2_GROUPS_EXCLUDED = groups.MM2_GROUPS_EXCLUDED


class Groups(Strict):
    """Consumer groups whose committed offsets follow the mirror (issue 28): off unless ``include`` is given. Each
    include piece is granted as written, so it is a literal group id or a prefix ``prefix.*`` (:mod:`.groups`)."""

    include: str | None = Field(
        None,
        description="consumer groups whose committed offsets follow the mirror, as Java regexes a Kafka ACL can "
        "express: a literal group id (app\\.orders) or a prefix (app\\..*); a comma means 'or'. A general "
        "regex and .* (every group) are refused. Off when not given",
    )
    exclude: str = Field(
        MM2_GROUPS_EXCLUDED,
        description="Java regexes of groups never synced (default: MirrorMaker 2's groups.exclude); the mirror's "
        "own groups (secure-mirror-*) are always excluded",
    )
    sync_interval_seconds: int = Field(
        5, ge=1, le=3600, description="seconds between translations of the groups' offsets onto the target"
    )

    @field_validator("include")
    @classmethod
    def _include(cls, value: str | None) -> str | None:
        pieces = topics.split_patterns(value or "")
        problems = [p for piece in pieces if (p := topics.check_pattern(piece) or groups.piece_problem(piece))]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @field_validator("exclude")
    @classmethod
    def _exclude(cls, value: str) -> str:
        problems = [p for piece in topics.split_patterns(value) if (p := topics.check_pattern(piece))]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @model_validator(mode="after")
    def _named_groups_are_synced(self) -> Groups:
        if excluded := self.selection().excluded_literals():
            raise Problem(
                "include",
                f"names {', '.join(map(repr, excluded))}, which mirror.groups.exclude (or the mirror's own "
                f"{groups.MIRROR_GROUPS}*) excludes: it would never be synced; remove it, or narrow "
                "mirror.groups.exclude",
            )
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.include and topics.split_patterns(self.include))

    def selection(self) -> groups.GroupSelection:
        """The groups selected (whole name, Java regex; never the mirror's own); selects nothing when disabled."""
        return groups.GroupSelection.parse(self.include or "", self.exclude)


def keeps_partitions(keep_partition: KeepPartition, source_partitions: int, target_partitions: int) -> bool:
    """Whether records keep their partition number on the target topic: with ``true`` always (the job refuses a
    target with fewer partitions: :func:`too_few_partitions`), with ``auto`` when both topics have as many, never with
    ``false``. The job writes by it, verify compares by it (per partition, else per topic)."""
    return keep_partition is True or (keep_partition == "auto" and source_partitions == target_partitions)


def too_few_partitions(keep_partition: KeepPartition, source_partitions: int, target_partitions: int) -> bool:
    """``keep_partition: true`` with a target topic that lacks some of the source's partitions (refused)."""
    return keep_partition is True and target_partitions < source_partitions


def grows_partitions(grow_partitions: bool, keep_partition: KeepPartition) -> bool:
    """Whether the job adds partitions to a target topic whose source grew them: ``mirror.topic_shape.grow_partitions``
    on, and partitions kept (``keep_partition`` true or auto). Asked as :attr:`Mirror.grows_partitions`; the job, which
    has job.json's copy of both settings, asks it here."""
    return grow_partitions and keep_partition is not False


class Heartbeats(Strict):
    """MirrorMaker 2's heartbeats, written to the target's ``heartbeats`` topic while the flow is alive
    (docs/heartbeats.md)."""

    interval_seconds: int = Field(
        1, ge=0, le=3600, description="seconds between heartbeats (MirrorMaker 2's default 1); 0 turns them off"
    )
    stale_after_seconds: int = Field(
        60,
        ge=1,
        le=86400,
        description="lag and verify flag the flow when its newest heartbeat is older than this; the job stops "
        "heartbeating while one trigger runs longer",
    )

    @model_validator(mode="after")
    def _stale_after_an_interval(self) -> Heartbeats:
        if self.enabled and self.stale_after_seconds <= self.interval_seconds:
            raise Problem(
                "stale_after_seconds",
                f"must be more than interval_seconds ({self.interval_seconds}), or every flow would look stale "
                "between two heartbeats; raise it, e.g. to 10 times the interval",
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.interval_seconds > 0


class TopicShape(Strict):
    """The target topic takes the source's shape (docs/replica.md): created with the source topic's own configs less
    ``exclude_configs``, those configs kept in step, and its partitions grown with the source's, every
    ``interval_seconds`` while the job runs (MirrorMaker 2: 600 s)."""

    sync_configs: bool = Field(
        True,
        description="create target topics with the source topic's own configs (less exclude_configs) and keep them in "
        "step; needs DESCRIBE_CONFIGS on the source topics and ALTER_CONFIGS on the target topics",
    )
    exclude_configs: list[str] = Field(
        default_factory=lambda: list(topic_shape.MM2_EXCLUDED_CONFIGS),
        description="topic configs never copied, Java regexes matching the whole name (MirrorMaker 2's "
        "config.properties.exclude default)",
    )
    grow_partitions: bool = Field(
        True,
        description="add partitions to a target topic whose source grew them, before a record of a new partition is "
        "written (with keep_partition true or auto); needs ALTER on the target topics",
    )
    interval_seconds: int = Field(
        30,
        ge=1,
        le=3600,
        description="seconds between two comparisons of the source's and target's configs and "
        "partitions while the job runs",
    )

    @field_validator("exclude_configs")
    @classmethod
    def _java_regexes(cls, value: list[str]) -> list[str]:
        for i, item in enumerate(value):
            try:
                topic_shape.excluded("", [item])
            except Exception as error:  # noqa: BLE001 - the regex module's reason, in one sentence
                raise Problem(
                    f"{i}",
                    f"{item!r} is not a regex the mirror can evaluate as Java does ({error}); write the "
                    "config name with its dots escaped (min\\.insync\\.replicas)",
                ) from None
        return value


RIDE_THROUGH_SECONDS = 1800  # a rolling restart of three brokers (up to 431 s here) and a 10-minute outage


class Mirror(Strict):
    topics: Topics
    rename: Rename = Field(default_factory=Rename)
    starting_offsets: Literal["earliest", "latest"] = "earliest"
    # Read the source as a read_committed consumer does in every guarantee and trigger (source_consumer_settings).
    source_isolation_level: Literal["read_committed", "read_uncommitted"] = Field(
        "read_committed",
        description="read_committed (default): records of aborted source transactions are never mirrored, and a "
        "transaction still open holds the mirror at its first record until it ends; read_uncommitted copies records "
        "of aborted and open transactions as ordinary records (at_least_once only)",
    )
    checkpoint_location: str = Field(min_length=1, description="a path or a URI (hdfs://, s3a://) Spark checkpoints to")
    keep_partition: KeepPartition = "auto"
    provenance_headers: bool = False
    delivery: Delivery = Field(default_factory=Delivery)
    spark: Spark = Field(default_factory=Spark)
    mm2: MirrorMaker2 = Field(default_factory=MirrorMaker2)
    groups: Groups = Field(default_factory=Groups)
    heartbeats: Heartbeats = Field(default_factory=Heartbeats)
    topic_shape: TopicShape = Field(default_factory=TopicShape)
    ride_through_seconds: int = Field(
        RIDE_THROUGH_SECONDS,
        ge=0,
        le=7 * 24 * 3600,
        description="how long the job rides through a cluster's bad minutes (a broker or a whole cluster away, leaders "
        "and coordinators moving, in-sync replicas below the minimum, a KDC away while tickets are valid) by asking "
        "and retrying in place, before it gives up with exit 1 (default 1800: a rolling restart and a 10-minute "
        "outage); a refused grant, source records gone or a deleted topic stop it at once; 0: give up at the first "
        "failure (docs/ride-through.md)",
    )

    @field_validator("checkpoint_location")
    @classmethod
    def _absolute_checkpoint(cls, value: str, info: ValidationInfo) -> str:
        base = (info.context or {}).get("base_dir")
        if "://" in value or Path(value).is_absolute() or base is None:
            return policy.check(value)
        return policy.check(str(Path(base) / value))

    @model_validator(mode="after")
    def _groups_need_acknowledged_offsets(self) -> Mirror:
        if self.groups.enabled and self.delivery.acks == "0":
            raise Problem(
                "groups",
                "group offsets follow the mirror through the target offsets the brokers acknowledge, and acks: 0 "
                "acknowledges none (no offset map could be written); set mirror.delivery.acks: all, or drop "
                "mirror.groups.include",
            )
        return self

    @model_validator(mode="after")
    def _continuous_is_at_least_once(self) -> Mirror:
        if self.continuous and self.delivery.exactly_once:
            raise Problem(
                "spark.trigger",
                "continuous processing is at_least_once only (an epoch Spark replays after a stop or crash is "
                "written again, and the sink's transactions are per micro-batch task); set "
                "mirror.delivery.guarantee: at_least_once, or drop mirror.spark.trigger (micro_batch)",
            )
        return self

    @model_validator(mode="after")
    def _exactly_once_reads_committed(self) -> Mirror:
        if self.delivery.exactly_once and self.source_isolation_level == "read_uncommitted":
            raise Problem(
                "source_isolation_level",
                "exactly_once mirrors what a read_committed reader of the source sees, and read_uncommitted would "
                "copy records of aborted source transactions as committed ones; drop "
                "mirror.source_isolation_level (read_committed), or set mirror.delivery.guarantee: at_least_once",
            )
        return self

    @property
    def source_consumer_settings(self) -> dict[str, str]:
        """How every reader of the source reads it, spelt alike by Kafka's Java client and librdkafka: the job's
        Spark source (``kafka.``), MirrorMaker 2's source consumer (``<alias>.consumer.``), lag and verify."""
        return {"isolation.level": self.source_isolation_level}

    @property
    def continuous(self) -> bool:
        return self.spark.trigger == "continuous"

    def keeps_partitions(self, source_partitions: int, target_partitions: int) -> bool:
        return keeps_partitions(self.keep_partition, source_partitions, target_partitions)

    @property
    def grows_partitions(self) -> bool:
        """Whether the job adds partitions to target topics (:func:`grows_partitions`): the target's ALTER grant,
        pre-flight's judgement of it and of the partition counts, and verify's report all ask it here."""
        return grows_partitions(self.topic_shape.grow_partitions, self.keep_partition)
