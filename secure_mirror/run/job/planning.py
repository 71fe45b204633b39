"""Target topics: their names, their creation, the keep-partition decision, the offset map's topic, and their shape
kept in step with the source's (topics that went away: :mod:`.deleted_topics`)."""

from __future__ import annotations

import json
import sys
import threading
import time

from secure_mirror.profile import topic_shape
from secure_mirror.profile.mirror import grows_partitions, keeps_partitions, too_few_partitions
from secure_mirror.profile.topics import target_name_problem
from secure_mirror.render.job_model import JobSettings
from secure_mirror.render.spark import SINK_OFFSET_MAP
from secure_mirror.run.job import offset_map_topic
from secure_mirror.run.job.admin_answers import REFUSED_CONFIG, cause_name, partition_counts, retriable
from secure_mirror.run.job.options import kafka_properties
from secure_mirror.run.job.outcome import SOURCE_GONE, JobRefused

TARGET_LOOK_MS = 5000  # the deleted-topic watch's look at the target: never the admin client's minute (an outage)


class TopicPlanner:
    """Decides, once per source topic, the target name and whether partitions are kept; creates missing topics."""

    def __init__(self, jvm, source_options: dict, sink_options: dict, settings: JobSettings):
        self.jvm = jvm
        admin = jvm.org.apache.kafka.clients.admin.Admin
        self.source = admin.create(kafka_properties(jvm, source_options))
        self.target = admin.create(kafka_properties(jvm, sink_options))
        self.pieces = settings.target_topic_pieces
        self.keep_mode = settings.keep_partition
        self.keep: dict[str, bool] = {}
        self.target_counts: dict[str, int] = {}  # target partitions of the topics planned, as the planner last saw
        self.shape = settings.topic_shape
        self.next_shape_sync = time.monotonic()
        self.configs_unsynced: str | None = None  # why configs are not synced (said once)
        self.shape_syncs = 0  # comparisons done by sync_shape (the status lines' topic-shape-sync-count)
        self.lock = threading.Lock()  # plan (the batch's thread) and sync_shape (the watch loop's) share the counts
        self.offset_map: str | None = sink_options.get(SINK_OFFSET_MAP) or None  # created with the first plan

    def target_name(self, topic: str) -> str:
        return topic.join(self.pieces)

    def _java_list(self, items):
        out = self.jvm.java.util.ArrayList()
        for item in items:
            out.add(item)
        return out

    def _partition_counts(self, admin, topics: list[str], timeout_ms: int = 0) -> dict[str, int | None]:
        """Each topic's partition count on one side; None for a topic that side does not have. Asked in one call that
        answers JSON (jvm/sink securemirror.driver.TopicPartitions), not walked topic by topic over Py4J; each answer
        within ``timeout_ms`` (0: the admin client's default)."""
        counts = self.jvm.securemirror.driver.TopicPartitions.count(admin, json.dumps(topics), timeout_ms)
        answer = json.loads(counts)
        return partition_counts(topics, answer["counts"], answer["errors"])

    def _new_topic(self, topic: str, partitions: int, configs: dict[str, str] | None):
        optional = self.jvm.java.util.Optional
        new = self.jvm.org.apache.kafka.clients.admin.NewTopic(topic, optional.of(partitions), optional.empty())
        if configs:
            settings = self.jvm.java.util.HashMap()
            for key, value in configs.items():
                settings.put(key, value)
            new = new.configs(settings)
        return new

    def _refused_configs(self, topic: str, partitions: int, configs: dict[str, str]) -> list[str]:
        """The configs the target's brokers refuse one by one (a creation validated only, per config)."""
        from py4j.protocol import Py4JJavaError

        only = self.jvm.org.apache.kafka.clients.admin.CreateTopicsOptions().validateOnly(True)
        refused = []
        for key, value in sorted(configs.items()):
            try:
                self.target.createTopics(
                    self._java_list([self._new_topic(topic, partitions, {key: value})]), only
                ).all().get()
            except Py4JJavaError as error:
                if cause_name(error) in REFUSED_CONFIG:
                    refused.append(key)
        return refused

    def _create(self, topic: str, partitions: int, configs: dict[str, str] | None = None) -> bool:
        """Creates a target topic; False when it exists already. Source configs the target refuses (a config its Kafka
        does not know, a value beyond its limits) are left out, said once, instead of failing the mirror."""
        from py4j.protocol import Py4JJavaError

        try:
            self.target.createTopics(self._java_list([self._new_topic(topic, partitions, configs)])).all().get()
            return True
        except Py4JJavaError as error:
            name = cause_name(error)
            if name == "TopicExistsException":
                return False
            if configs and name in REFUSED_CONFIG:
                refused = self._refused_configs(topic, partitions, configs) or sorted(configs)
                print(
                    f"secure-mirror job: target topic {topic} is created without the source's "
                    f"{', '.join(refused)}: the target refused {'it' if len(refused) == 1 else 'them'} ({name}); "
                    "set them on the target topic by hand if they matter, or exclude them with "
                    "mirror.topic_shape.exclude_configs",
                    file=sys.stderr,
                    flush=True,
                )
                return self._create(topic, partitions, {k: v for k, v in configs.items() if k not in refused})
            if name in ("TopicAuthorizationException", "ClusterAuthorizationException"):
                raise JobRefused(
                    f"target topic {topic} does not exist and the target identity may not create it "
                    f"({name}): create it with {partitions} partitions, or grant CREATE on it "
                    "(see acls/target.acls.json of the rendered profile)"
                ) from None
            if retriable(error):
                raise  # the query fails; --supervise starts it again
            raise JobRefused(f"could not create target topic {topic}: {name}") from None

    def _create_offset_map(self, topics: list[str]) -> None:
        """The offset map's topic, before the sink first writes to it (docs/offset-map.md), with a retention that
        covers the source topics' (those of the first batch)."""
        if self.offset_map is None or not topics:
            return
        retention = self.source_retention(topics)
        if self._create(self.offset_map, 1, offset_map_topic.topic_configs(retention)):
            if (note := offset_map_topic.unread_note(self.offset_map, retention)) is not None:
                print(note, file=sys.stderr, flush=True)
        self.offset_map = None  # created, or there already

    def source_retention(self, topics: list[str]) -> dict[str, offset_map_topic.SourceRetention | None]:
        """Each source topic's retention, None where the source would not say (no DESCRIBE_CONFIGS, an error)."""
        resource = self.jvm.org.apache.kafka.common.config.ConfigResource
        keys = {topic: resource(resource.Type.TOPIC, topic) for topic in topics}
        futures = self.source.describeConfigs(self._java_list(keys.values())).values()
        found: dict[str, offset_map_topic.SourceRetention | None] = {}
        for topic, key in keys.items():
            try:
                config = futures.get(key).get()
                found[topic] = offset_map_topic.SourceRetention(
                    str(config.get("cleanup.policy").value()), int(config.get("retention.ms").value())
                )
            except Exception:  # noqa: BLE001 - a topic it may not describe: its retention is unknown
                found[topic] = None
        return found

    def plan(self, topics: set[str], reach: dict[str, int] | None = None) -> dict[str, bool]:
        """Per topic of a batch, whether it keeps partitions; new topics are created (with the source's configs) or
        grown. ``reach``: per topic, the partition count the batch's records need (its highest partition + 1); a kept
        topic's target is grown to it before the batch is written (None: the source's counts are asked)."""
        new = sorted(t for t in topics if t not in self.keep)
        for topic in new:  # validate checked every name it could know; a regex or prefix can select longer ones
            if (problem := target_name_problem(self.target_name(topic))) is not None:
                raise JobRefused(
                    f"source topic {topic} would be mirrored as {self.target_name(topic)}, which {problem}; "
                    "exclude it with mirror.topics.exclude, or choose a rename rule that gives a legal name"
                )
        self._create_offset_map(new)  # once every name is known to be legal: nothing is created for a refused plan
        with self.lock:
            if new:
                self._plan_new(new)
            self._grow_kept(topics, reach)
            return {t: self.keep[t] for t in topics}

    def _plan_new(self, new: list[str]) -> None:
        sources = self._partition_counts(self.source, new)
        targets = self._partition_counts(self.target, [self.target_name(t) for t in new])
        for topic in new:
            wanted, have = sources[topic], targets[self.target_name(topic)]
            if wanted is None:  # deleted since the batch read it: as DeletedTopicWatch would tell
                raise JobRefused(SOURCE_GONE.format(f"{topic} is no longer on the source"))
            if have is None:
                self._create(self.target_name(topic), wanted, self._configs_to_copy(topic))
                have = wanted
            elif self._grows() and topic_shape.partition_growth(wanted, have) == "grow":
                have = self._grow(topic, wanted, have)
            if too_few_partitions(self.keep_mode, wanted, have):
                raise JobRefused(
                    f"keep_partition is true but target topic {self.target_name(topic)} has {have} "
                    f"partitions and {topic} has {wanted}; add partitions to the target topic"
                )
            self.keep[topic] = keeps_partitions(self.keep_mode, wanted, have)
            self.target_counts[topic] = have

    def _grows(self) -> bool:
        return grows_partitions(self.shape.grow_partitions, self.keep_mode)

    def _grow_kept(self, topics: set[str], reach: dict[str, int] | None) -> None:
        """Kept topics whose batch reaches partitions the target lacks: the target grows first."""
        kept = sorted(t for t in topics if self.keep[t])
        if reach is None and kept:
            reach = {t: n for t, n in self._partition_counts(self.source, kept).items() if n is not None}
        for topic in kept:
            needed = (reach or {}).get(topic, 0)
            if needed > self.target_counts[topic]:
                self.target_counts[topic] = self._grow(topic, needed, self.target_counts[topic])

    def _grow(self, topic: str, count: int, have: int) -> int:
        """Adds partitions to ``topic``'s target up to ``count``; its partition count after. Without permission a
        kept topic cannot be written where its records belong: refused under ``keep_partition: true``, no longer
        kept under ``auto``."""
        name = self.target_name(topic)
        if not self._grows():
            return self._cannot_grow(topic, count, have, "mirror.topic_shape.grow_partitions is off")
        from py4j.protocol import Py4JJavaError

        request = self.jvm.java.util.HashMap()
        request.put(name, self.jvm.org.apache.kafka.clients.admin.NewPartitions.increaseTo(count))
        try:
            self.target.createPartitions(request).all().get()
        except Py4JJavaError as error:
            cause = cause_name(error)
            if cause == "InvalidPartitionsException":  # grown by someone else meanwhile: ask again
                return self._partition_counts(self.target, [name])[name] or have
            if cause in ("TopicAuthorizationException", "ClusterAuthorizationException"):
                return self._cannot_grow(topic, count, have, f"the target identity may not alter it ({cause})")
            raise
        print(
            f"secure-mirror job: grew target topic {name} from {have} to {count} partitions",
            file=sys.stderr,
            flush=True,
        )
        return count

    def _cannot_grow(self, topic: str, count: int, have: int, why: str) -> int:
        name = self.target_name(topic)
        if self.keep_mode is True:
            raise JobRefused(
                f"source topic {topic} has {count} partitions and target topic {name} {have}, and {why}: add "
                f"partitions to {name}, or grant the mirror identity ALTER on it (acls/target.acls.json)"
            )
        if self.keep.get(topic):
            print(
                f"secure-mirror job: {topic} grew to {count} partitions and {name} has {have} ({why}); its records "
                "no longer keep their partition numbers",
                file=sys.stderr,
                flush=True,
            )
            self.keep[topic] = False
        return have

    # ---- the target topic's configs, and its partitions between batches (docs/replica.md) -------------------------
    def _exclude(self) -> list[str]:
        return list(self.shape.exclude_configs)

    def _configs_to_copy(self, topic: str) -> dict[str, str] | None:
        """The configs a new target topic is created with: the source topic's own, less the excluded."""
        if not self.shape.sync_configs or self.configs_unsynced is not None:
            return None
        entries = self._topic_configs(self.source, [topic], "source", "DESCRIBE_CONFIGS")
        return topic_shape.configs_to_copy(entries[topic], self._exclude()) if topic in entries else None

    def _topic_configs(
        self, admin, topics: list[str], side: str, operation: str
    ) -> dict[str, list[topic_shape.ConfigEntry]]:
        """Each topic's config entries on one side; a topic the identity may not describe is left out, and config sync
        stops with one line in the log. Asked in one call that answers JSON (jvm/sink securemirror.driver.TopicConfigs),
        not walked entry by entry over Py4J."""
        answer = json.loads(self.jvm.securemirror.driver.TopicConfigs.describe(admin, json.dumps(topics)))
        for topic, error in answer["errors"].items():
            if error.endswith("AuthorizationException"):
                self._stop_config_sync(f"the {side} identity may not {operation} {topic}")
        return {
            topic: [topic_shape.ConfigEntry(name, value, source) for name, value, source in entries]
            for topic, entries in answer["configs"].items()
        }

    def _stop_config_sync(self, why: str) -> None:
        if self.configs_unsynced is None:
            self.configs_unsynced = why
            print(
                f"secure-mirror job: topic configs are not synced: {why}; grant DESCRIBE_CONFIGS on the source topics "
                "and ALTER_CONFIGS on the target topics (acls/*.acls.json), or set "
                "mirror.topic_shape.sync_configs: false",
                file=sys.stderr,
                flush=True,
            )

    def sync_shape(self) -> bool:
        """Every ``interval_seconds``: the planned topics' configs and partition counts made the source's. Called from
        the job's watch loop; always False (it never stops the query), and a round the clusters do not answer is
        tried again at the next interval (only the rounds done are counted in ``shape_syncs``)."""
        if time.monotonic() < self.next_shape_sync or not self.keep:
            return False
        self.next_shape_sync = time.monotonic() + self.shape.interval_seconds
        try:
            with self.lock:
                topics = sorted(self.keep)
                if self.shape.sync_configs and self.configs_unsynced is None:
                    self._sync_configs(topics)
                if self._grows():
                    counts = self._partition_counts(self.source, topics)
                    for topic in topics:
                        wanted, have = counts[topic], self.target_counts[topic]
                        if wanted is not None and topic_shape.partition_growth(wanted, have) == "grow":
                            self.target_counts[topic] = self._grow(topic, wanted, have)
            self.shape_syncs += 1
        except JobRefused:
            raise
        except Exception as error:  # noqa: BLE001 - a cluster that did not answer this time: next interval
            print(f"secure-mirror job: topic shape not synced this time: {cause_name(error)}", file=sys.stderr)
        return False

    def _sync_configs(self, topics: list[str]) -> None:
        source = self._topic_configs(self.source, topics, "source", "DESCRIBE_CONFIGS")
        names = {self.target_name(t): t for t in source}
        target = self._topic_configs(self.target, list(names), "target", "DESCRIBE_CONFIGS")
        ops = self.jvm.java.util.HashMap()
        resource = self.jvm.org.apache.kafka.common.config.ConfigResource
        admin = self.jvm.org.apache.kafka.clients.admin
        for name, topic in names.items():
            changes = topic_shape.config_changes(source[topic], target.get(name, []), self._exclude())
            if name in target and changes:
                ops.put(
                    resource(resource.Type.TOPIC, name),
                    self._java_list(
                        admin.AlterConfigOp(
                            admin.ConfigEntry(c.name, c.value), getattr(admin.AlterConfigOp.OpType, c.op)
                        )
                        for c in changes
                    ),
                )
        if ops.isEmpty():
            return
        from py4j.protocol import Py4JJavaError

        try:
            self.target.incrementalAlterConfigs(ops).all().get()
        except Py4JJavaError as error:
            if not cause_name(error).endswith("AuthorizationException"):
                raise
            self._stop_config_sync(f"the target identity may not ALTER_CONFIGS ({cause_name(error)})")

    def source_partitions(self, topics: list[str]) -> dict[str, int | None]:
        """Each source topic's partition count (None: the source no longer has it)."""
        return self._partition_counts(self.source, topics) if topics else {}

    def gone(self, topics: set[str]) -> list[str]:
        """Those of ``topics`` the source cluster no longer has."""
        counts = self._partition_counts(self.source, sorted(topics)) if topics else {}
        return sorted(topic for topic, count in counts.items() if count is None)

    def target_gone(self) -> list[str]:
        """The target topics of the topics planned that the target cluster no longer has."""
        with self.lock:
            names = sorted({self.target_name(topic) for topic in self.target_counts})
        counts = self._partition_counts(self.target, names, TARGET_LOOK_MS) if names else {}
        return sorted(name for name, count in counts.items() if count is None)

    def earliest(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The first offsets the source still has for ``partitions`` (those new since the previous batch)."""
        jvm = self.jvm
        request = jvm.java.util.HashMap()
        keys = {}
        for topic, partition in partitions:
            keys[(topic, partition)] = jvm.org.apache.kafka.common.TopicPartition(topic, partition)
            request.put(keys[(topic, partition)], jvm.org.apache.kafka.clients.admin.OffsetSpec.earliest())
        found = self.source.listOffsets(request).all().get()
        return {key: found.get(tp).offset() for key, tp in keys.items()}

    def close(self) -> None:
        for admin in (self.source, self.target):
            admin.close()
