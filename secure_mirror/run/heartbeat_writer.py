"""The job's driver writes MirrorMaker 2's heartbeats to the target while the flow is alive (docs/heartbeats.md).

The monitor (``run/monitor.py``) tells :class:`HeartbeatWriter` when the query last proved alive (a trigger completed,
or it waits between triggers) and calls :meth:`HeartbeatWriter.tick` on every turn of its loop; the decision is
``heartbeats.beat_due``. The record goes through a Kafka producer of the driver's JVM with the sink's own target
settings (the mirror's target identity), to the target's ``heartbeats`` topic, which it creates as MirrorMaker 2 does
(one partition, compacted) when missing. A heartbeat that fails is said once on stderr and never stops the mirror.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from secure_mirror.render.spark import HEARTBEAT_ALIASES, HEARTBEAT_INTERVAL, HEARTBEAT_STALE_AFTER
from secure_mirror.run import heartbeats

# The heartbeat producer must never hold the monitor's loop: metadata and sends give up quickly.
PRODUCER_OVERRIDES = {"max.block.ms": "5000", "linger.ms": "0", "request.timeout.ms": "10000"}
PRODUCER_DROPPED = ("transactional.id",)


def settings_of(sink_options: dict) -> tuple[float, float, str, str] | None:
    """(interval s, stale after s, source alias, target alias) from the sink's options; None when off or absent."""
    try:
        interval = float(sink_options.get(HEARTBEAT_INTERVAL, 0))
        stale = float(sink_options.get(HEARTBEAT_STALE_AFTER, 60))
        source, target = json.loads(sink_options.get(HEARTBEAT_ALIASES, "[]"))
    except (TypeError, ValueError):
        return None
    return (interval, stale, str(source), str(target)) if interval > 0 else None


def producer_properties(jvm, sink_options: dict):
    props = jvm.java.util.Properties()
    for key, value in sink_options.items():
        if key.startswith("kafka.") and key[len("kafka.") :] not in PRODUCER_DROPPED:
            props.setProperty(key[len("kafka.") :], str(value))
    for key, value in PRODUCER_OVERRIDES.items():
        props.setProperty(key, value)
    return props


class HeartbeatWriter:
    def __init__(self, jvm, sink_options: dict, stream=None, clock=time.monotonic):
        self.jvm = jvm
        self.options = sink_options
        self.settings = settings_of(sink_options)
        self.stream = stream or sys.stderr
        self.clock = clock
        self.producer: Any = None
        self.pending: list[tuple[Any, int]] = []  # (the send's future, its timestamp ms)
        self.last_beat: float | None = None
        self.acknowledged_ms: int | None = None  # the newest heartbeat the target acknowledged
        self.alive_at: float | None = None
        self.told = False

    @property
    def enabled(self) -> bool:
        return self.settings is not None

    def alive(self) -> None:
        """The query proved alive now: a trigger completed, or it waits between triggers."""
        self.alive_at = self.clock()

    def age_ms(self) -> int | None:
        """How old the newest acknowledged heartbeat is, in ms (None: none yet)."""
        self._collect()
        return None if self.acknowledged_ms is None else max(0, int(time.time() * 1000) - self.acknowledged_ms)

    def tick(self, force: bool = False) -> None:
        """Write a heartbeat when one is due (``force``: the query ended caught up, one last one, acknowledged)."""
        if self.settings is None:
            return
        interval, stale, _source, _target = self.settings
        now = self.clock()
        if not force and not heartbeats.beat_due(now, self.last_beat, interval, self.alive_at, stale):
            return
        if force and self.alive_at is None:
            return
        self.last_beat = now
        try:
            self._send()
            if force:
                self.producer.flush()
        except Exception as error:  # noqa: BLE001 - a heartbeat must never fail the mirror
            self._tell(error)
        self._collect()

    def _send(self) -> None:
        assert self.settings is not None  # tick() returns first when off
        _interval, _stale, source, target = self.settings
        if self.producer is None:
            self.producer = self._start()
        stamp = int(time.time() * 1000)
        key, value = heartbeats.encode(heartbeats.Heartbeat(source, target, stamp))
        record = self.jvm.org.apache.kafka.clients.producer.ProducerRecord(
            heartbeats.TOPIC,
            self.jvm.java.lang.Integer(0),
            self.jvm.java.lang.Long(stamp),
            bytearray(key),
            bytearray(value),
        )
        self.pending.append((self.producer.send(record), stamp))

    def _start(self):
        kafka = self.jvm.org.apache.kafka
        props = producer_properties(self.jvm, self.options)
        self._create_topic(props)
        serializer = kafka.common.serialization.ByteArraySerializer
        return kafka.clients.producer.KafkaProducer(props, serializer(), serializer())

    def _create_topic(self, props) -> None:
        """The ``heartbeats`` topic as MirrorMaker 2 creates it; one that exists, or that the identity may not
        create, is left to the first send to judge."""
        admin = self.jvm.org.apache.kafka.clients.admin.Admin.create(props)
        try:
            optional = self.jvm.java.util.Optional
            topic = self.jvm.org.apache.kafka.clients.admin.NewTopic(
                heartbeats.TOPIC, optional.of(heartbeats.PARTITIONS), optional.empty()
            )
            configs = self.jvm.java.util.HashMap()
            for key, value in heartbeats.TOPIC_CONFIGS.items():
                configs.put(key, value)
            topic.configs(configs)
            listed = self.jvm.java.util.ArrayList()
            listed.add(topic)
            admin.createTopics(listed).all().get()
        except Exception:  # noqa: BLE001 - exists already, or not ours to create: the send tells
            pass
        finally:
            admin.close()

    def _collect(self) -> None:
        """Note the heartbeats the target acknowledged; say the first failure."""
        while self.pending and self.pending[0][0].isDone():
            future, stamp = self.pending.pop(0)
            try:
                future.get()
            except Exception as error:  # noqa: BLE001 - said once, never fails the mirror
                self._tell(error)
                continue
            self.acknowledged_ms = stamp if self.acknowledged_ms is None else max(self.acknowledged_ms, stamp)

    def _tell(self, error: BaseException) -> None:
        if not self.told:
            self.told = True
            text = str(error).strip().splitlines()
            print(
                f"secure-mirror job: heartbeats to the target's {heartbeats.TOPIC} topic fail "
                f"({type(error).__name__}: {text[0][:300] if text else ''}); the mirror goes on (docs/heartbeats.md)",
                file=self.stream,
                flush=True,
            )

    def close(self) -> None:
        if self.producer is not None:
            try:
                self.producer.close(self.jvm.java.time.Duration.ofSeconds(5))
            except Exception:  # noqa: BLE001 - closing at the end of the job
                pass
            self.producer = None
