"""The topics MirrorMaker 2 names after the clusters' aliases, as the rendered ``mm2.properties`` makes it name them.

Read from Kafka 4.2's ``DefaultReplicationPolicy`` (``IdentityReplicationPolicy`` inherits the internal names) and
``MirrorMakerConfig``:

- offset-syncs: ``mm2-offset-syncs<s><target alias><s>internal``, on the side ``offset-syncs.topic.location`` names
  (the source by default);
- checkpoints: ``<source alias><s>checkpoints<s>internal``, on the target;
- heartbeats: ``heartbeats`` on the target, and the source's copied as ``<source alias><separator>heartbeats``
  (MirrorMaker 2 copies heartbeats topics whatever ``topics`` says);
- the dedicated mode's Connect topics: ``mm2-configs.<source alias>.internal``, ``mm2-offsets...``, ``mm2-status...``,
  on the target.

``<separator>`` is the replication policy's (``mirror.rename``: ``{source_alias}<separator>{topic}``, else '.');
``<s>`` is the same unless ``replication.policy.internal.topic.separator.enabled`` is false ('.'). Kafka refuses a
topic name over 249 characters or with other characters than letters, digits, '.', '_' and '-'
(:data:`topics.LEGAL_TOPIC`), so an alias too long for one of these names is refused at validate
(:func:`mm2_topic_problems`), and render grants on exactly these names (``render/acls/mm2.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from secure_mirror.profile import topics
from secure_mirror.profile.policy import shorten

INTERNAL_SEPARATOR_ENABLED = "replication.policy.internal.topic.separator.enabled"
_CONNECT_TOPICS = ("configs", "offsets", "status")


@dataclass(frozen=True)
class Mm2Topic:
    kind: str  # offset-syncs, checkpoints, heartbeats, configs, offsets, status; "copied heartbeats" (not its own)
    name: str
    side: str  # "source" or "target": the cluster it is on
    alias: str  # "source" or "target": the side whose alias it carries ("" for heartbeats)

    @property
    def what(self) -> str:
        connect = self.kind in ("configs", "offsets", "status")
        return (
            "the copy of the source's heartbeats"
            if self.kind == "copied heartbeats"
            else (f"its Connect worker's {self.kind} topic" if connect else f"its {self.kind} topic")
        )


def internal_separator(separator: str, properties: Mapping[str, object]) -> str:
    """The separator of MirrorMaker 2's internal topic names: the policy's, unless mm2.properties turns that off."""
    enabled = str(properties.get(INTERNAL_SEPARATOR_ENABLED, "true")).strip().lower() != "false"
    return separator if enabled else "."


def mm2_topics(
    source_alias: str, target_alias: str, separator: str | None, properties: Mapping[str, object]
) -> list[Mm2Topic]:
    """Every topic MirrorMaker 2 names for the flow ``source_alias -> target_alias``; ``separator`` is
    ``Rename.mm2_separator`` (None: no policy names topics as the profile does, and '.' is used), ``properties``
    ``mirror.mm2.properties``."""
    sep = separator or "."
    inner = internal_separator(sep, properties)
    syncs_side = str(properties.get("offset-syncs.topic.location", "source")).strip().lower()
    return [
        Mm2Topic("heartbeats", topics.HEARTBEATS_TOPIC, "target", ""),
        Mm2Topic("checkpoints", f"{source_alias}{inner}checkpoints{inner}internal", "target", "source"),
        *(Mm2Topic(kind, f"mm2-{kind}.{source_alias}.internal", "target", "source") for kind in _CONNECT_TOPICS),
        Mm2Topic("copied heartbeats", f"{source_alias}{sep}heartbeats", "target", "source"),
        Mm2Topic("offset-syncs", f"mm2-offset-syncs{inner}{target_alias}{inner}internal", syncs_side, "target"),
    ]


def mm2_topic_problems(
    source_alias: str, target_alias: str, separator: str | None, properties: Mapping[str, object]
) -> list[tuple[str, str]]:
    """(field, sentence) for the longest MirrorMaker 2 topic name Kafka would refuse of each alias: the alias it
    carries and how long that may be, or, when the alias alone cannot make it fit, the rename's separator too."""
    aliases = {"source": source_alias, "target": target_alias}
    problems: dict[str, str] = {}
    for topic in sorted(mm2_topics(source_alias, target_alias, separator, properties), key=lambda t: -len(t.name)):
        if topics.LEGAL_TOPIC.match(topic.name):
            continue
        alias, over = aliases.get(topic.alias, ""), len(topic.name) - topics.MAX_TOPIC_LENGTH
        field = f"{topic.alias}.alias" if 0 < over < len(alias) else "mirror.rename.template"  # the alias can fix it
        fix = (
            f"shorten {field} to at most {len(alias) - over} characters"
            if field.endswith(".alias")
            else "shorten the aliases and the separator of mirror.rename.template"
        )
        what = (
            f"over Kafka's limit of {topics.MAX_TOPIC_LENGTH} characters"
            if over > 0
            else "with characters Kafka refuses in a topic name (it takes letters, digits, '.', '_' and '-')"
        )
        problems.setdefault(
            field,
            f"MirrorMaker 2 (mm2/mm2.properties) would name {topic.what} on the {topic.side} {shorten(topic.name, 80)}, "
            f"{what}; {fix}",
        )
    return list(problems.items())
