"""Helpers for tests against the sandbox: ACL grants that undo themselves, unique topic names, plain records, kcat."""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path

from secure_mirror import paths
from secure_mirror.kafka import admin_ops
from secure_mirror.preflight import run_preflight
from secure_mirror.run import heartbeats

_seq = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}.{os.getpid()}.{next(_seq)}.{uuid.uuid4().hex[:6]}"


def topic_acls(topic: str, *ops: str, principal: str = "User:mirror", pattern: str = "LITERAL") -> list[dict]:
    return [
        {
            "resource_type": "TOPIC",
            "resource_name": topic,
            "pattern_type": pattern,
            "principal": principal,
            "operation": op,
        }
        for op in ops
    ]


def group_acls(group: str, principal: str = "User:mirror", pattern: str = "LITERAL") -> list[dict]:
    return [
        {
            "resource_type": "GROUP",
            "resource_name": group,
            "pattern_type": pattern,
            "principal": principal,
            "operation": "READ",
        }
    ]


@contextlib.contextmanager
def granted(sandbox, side: str, acls: list[dict]):
    """ACLs that exist only inside the ``with`` block."""
    sandbox.admin(side, admin_ops.create_acls, acls)
    try:
        yield
    finally:
        sandbox.admin(side, admin_ops.delete_acls, acls)


def plain_records(n: int, tag: str = "r") -> list[dict]:
    return [
        {"key": f"{tag}-{i}".encode(), "value": f"value {i}".encode(), "headers": [("h", str(i).encode())]}
        for i in range(n)
    ]


def kcat_consume(conf_file: Path, topic: str, *options: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``kcat -F conf_file -C -t topic -o beginning -e *options`` on the librdkafka setup builds: Debian's kcat links
    librdkafka 2.0.2, whose SCRAM the Kafka 4.x brokers refuse (librdkafka#4895, fixed in 2.6.1), as the README says."""
    return subprocess.run(
        ["kcat", "-F", str(conf_file), "-C", "-t", topic, "-o", "beginning", "-e", *options],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LD_LIBRARY_PATH": str(paths.librdkafka_dir() / "lib")},
    )


def console_consume(
    bootstrap: str,
    topic: str,
    properties: Path,
    count: int,
    group: str,
    java_options: list[str] | None = None,
) -> subprocess.CompletedProcess:
    """Kafka's own console consumer, ``count`` records of ``topic`` from the beginning as group ``group``, with the
    client settings of ``properties`` (a rendered ``client.properties``) and the JVM's ``java_options``."""
    return subprocess.run(
        [
            paths.java_executable(),
            "-Xmx256m",
            *(java_options or []),
            "-cp",
            paths.kafka_classpath(),
            "org.apache.kafka.tools.consumer.ConsoleConsumer",
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--from-beginning",
            "--max-messages",
            str(count),
            "--timeout-ms",
            "60000",
            "--group",
            group,
            "--command-config",
            str(properties),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


@contextlib.contextmanager
def mirrormaker2(properties: Path, log: Path, java_options: list[str], env: dict[str, str] | None = None):
    """Kafka's own MirrorMaker 2 (dedicated mode) with a rendered ``mm2.properties``, its output in ``log``, running
    inside the block."""
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [paths.java_executable(), "-Xmx256m", *java_options, "-cp", paths.kafka_classpath(),
             "org.apache.kafka.connect.mirror.MirrorMaker", str(properties)],
            stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, env=env,
        )  # fmt: skip
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def wait_for_mirrored(sandbox, topic: str, count: int, log: Path, timeout: float = 240) -> list:
    """The records of ``topic`` on the target once it holds ``count`` (read as the admin), else fails with the log."""
    deadline, got = time.monotonic() + timeout, []
    while time.monotonic() < deadline and len(got) < count:
        time.sleep(5)
        if topic in sandbox.admin("target", admin_ops.list_topics):
            group = unique("admin-check")
            got = sandbox.admin("target", admin_ops.consume, topic, max_records=count, timeout=30, group_id=group)
    assert len(got) == count, log.read_text()[-3000:]
    denied = [line for line in log.read_text().splitlines() if "AuthorizationException" in line]
    assert not denied, denied[:5]
    return got


def commit_offsets(conf: dict, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit ``offsets`` (partition -> offset) of ``topic`` for ``group``, as the group's consumer would, without
    joining it (run through ``sandbox.admin``: ``conf`` is that identity's)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**conf, "group.id": group, "enable.auto.commit": False, "logger": admin_ops.LOG})
    consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    consumer.close()


def preflight_old_source(profile, **options):
    """Pre-flight of a profile whose source is the sandbox's old broker, asked again once when that broker's group
    coordinator timed out (slow on a busy machine: pre-flight's own fix says "run pre-flight again")."""
    report = run_preflight(profile, **options)
    if "_TIMED_OUT" in report.get("source.acl.group-read").finding:
        report = run_preflight(profile, **options)
    return report


# ---- topic shape: admin calls, run in the sandbox admin's own process (sandbox.admin) ----
def topic_configs(conf: dict, topic: str) -> dict[str, str]:
    """The topic's own configs (set on the topic, not defaults)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType

    admin = AdminClient(conf)
    [future] = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    entries = future.result(timeout=30)
    return {n: e.value for n, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def set_config(conf: dict, topic: str, name: str, value: str) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entry = ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[entry])
    admin = AdminClient(conf)  # referenced until its futures are done
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)


def grow(conf: dict, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewPartitions

    admin = AdminClient(conf)
    for future in admin.create_partitions([NewPartitions(topic, partitions)]).values():
        future.result(timeout=30)


def heartbeats_topic_made(conf: dict) -> None:
    """The target's heartbeats topic, created when missing as the job creates it (``run.heartbeats``: its partitions
    and configs), as any earlier run leaves it: pre-flight cannot ask WRITE on a topic still to create
    (``target.acl.heartbeats-topic`` says unverified, rightly), so a test that expects every check to pass must not
    depend on which test ran before it."""
    if heartbeats.TOPIC not in admin_ops.list_topics(conf):
        admin_ops.create_topics(conf, {heartbeats.TOPIC: heartbeats.PARTITIONS}, config=heartbeats.TOPIC_CONFIGS)


def partition_count(conf: dict, topic: str) -> int:
    from confluent_kafka.admin import AdminClient

    return len(AdminClient(conf).list_topics(topic, timeout=30).topics[topic].partitions)


def _read_to_end(
    conf: dict, topic: str, partitions: list[int] | None, timeout: float, group_id: str = "secure-mirror-check"
) -> tuple[dict[int, list[dict]], set[int]]:
    """Every record of ``partitions`` (all of the topic's when None), per partition in offset order, read read_committed
    from the start to each partition's end as the reader sees it (its end-of-partition event, at the last stable
    offset: transaction markers, aborted records and compacted-away offsets leave no offset to wait for), as
    ``admin_ops.consume`` gives them; and the partitions not read to their end within ``timeout``. Never stops at a
    number of records: a record more than expected is read too."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    settings = {"group.id": group_id, "enable.auto.commit": False, "enable.partition.eof": True}
    consumer = Consumer({**conf, **settings, "isolation.level": "read_committed", "logger": admin_ops.LOG})
    try:
        if partitions is None:
            partitions = list(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        found: dict[int, list[dict]] = {p: [] for p in partitions}
        pending, deadline = set(partitions), time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for message in consumer.consume(10_000, 0.5):
                if message.error() is None:
                    found[message.partition()].append(
                        {
                            "key": message.key(),
                            "value": message.value(),
                            "headers": message.headers(),
                            "timestamp": message.timestamp()[1],
                            "partition": message.partition(),
                            "offset": message.offset(),
                        }
                    )
                elif message.error().code() == KafkaError._PARTITION_EOF:
                    pending.discard(message.partition())
        return found, pending
    finally:
        consumer.close()


def partition_records(conf: dict, topic: str, partition: int, timeout: float = 30.0) -> list[tuple]:
    """(key, value) of each record of one partition, from its start to its end (what was read by ``timeout``)."""
    found, _pending = _read_to_end(conf, topic, [partition], timeout)
    return [(r["key"], r["value"]) for r in found[partition]]


def consume_to_end(
    conf: dict, topic: str, *, timeout: float = 60.0, group_id: str = "secure-mirror-check"
) -> list[dict]:
    """Every record of ``topic``, read read_committed to each partition's end (not up to an expected count, so that
    an extra record is seen), in ``admin_ops.consume``'s shape, partition by partition in offset order."""
    found, pending = _read_to_end(conf, topic, None, timeout, group_id)
    if pending:
        raise TimeoutError(f"partitions {sorted(pending)} of {topic} not read to their end in {timeout:.0f} s")
    return [record for partition in sorted(found) for record in found[partition]]


def keys_by_partition(conf: dict, topic: str, timeout: float = 120.0) -> dict[int, list[bytes]]:
    """Every record's key, per partition in offset order, read read_committed to each partition's end."""
    found, pending = _read_to_end(conf, topic, None, timeout)
    if pending:
        raise TimeoutError(f"partitions {sorted(pending)} of {topic} not read to their end in {timeout:.0f} s")
    return {p: [r["key"] for r in records] for p, records in found.items()}


def assert_same_records(source, target, source_topic: str, target_topic: str, expected: int) -> None:
    """An independent judge of a mirror, beside its own ``verify``: each side's topic read by confluent-kafka as the
    identity ``source`` / ``target`` (a ``KafkaIdentity``, the side's admin), read_committed to each partition's end;
    the target must hold the source's (key, value) pairs, each as many times, and ``expected`` of them."""
    held = {}
    for name, identity, topic in (("source", source, source_topic), ("target", target, target_topic)):
        held[name] = Counter((r["key"], r["value"]) for r in identity.call(consume_to_end, topic, timeout=120.0))
    missing, extra = held["source"] - held["target"], held["target"] - held["source"]
    counts = {name: sum(pairs.values()) for name, pairs in held.items()}
    assert not missing and not extra, f"{counts}; missing on the target {dict(missing)}; extra {dict(extra)}"
    assert counts == {"source": expected, "target": expected}, counts


def member_until(conf: dict, group: str, topic: str, leave: str, seconds: float) -> int:
    """A member of ``group`` on the source (subscribed, committing nothing) until the file ``leave`` exists, at most
    ``seconds``: records seen."""
    from confluent_kafka import Consumer

    consumer = Consumer({**conf, "group.id": group, "enable.auto.commit": False, "logger": admin_ops.LOG})
    consumer.subscribe([topic])
    seen, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline and not Path(leave).exists():
        seen += consumer.poll(0.5) is not None
    consumer.close()
    return seen


def group_members(conf: dict, group: str) -> tuple[str, int]:
    """The group's state on the broker and how many of its members hold an assignment."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({**conf, "logger": admin_ops.LOG})
    described = admin.describe_consumer_groups([group], request_timeout=30)[group].result(30)
    assigned = [m for m in described.members if m.assignment and m.assignment.topic_partitions]
    return described.state.name, len(assigned)
