"""The benchmark's contenders, one table for both harnesses: ``scripts/bench`` (``benchmarks/comparison/``) and
``scripts/bench --scale`` (``benchmarks/scale/``) know the same names, labels and profiles, and run any of them
(``--contenders a,b``).

- ``copy_limit``: one JVM, a consumer-producer loop per task slot (``benchmarks/CopyLimit.java``), the least a mirror
  does; it bounds the others.
- ``copy_limit_1mib_batches`` and ``copy_limit_max_poll_10000``: the copy limit with 1 MiB producer batches at every
  partition count, or with its consumer's ``max.poll.records`` at 10,000, as it was before NOTES section 18 (it now
  sizes its batches from its partitions and leaves ``max.poll.records`` at Kafka's 500); not run unless named.
- ``mirrormaker2``: MirrorMaker 2 in dedicated mode, ``tasks.max`` the task slots, from the mm2.properties render
  writes.
- ``mirrormaker2_exactly_once``: the same with exactly-once source support (KIP-618): Kafka's own exactly-once mirror,
  the anchor for the job's ``exactly_once`` (:func:`mm2_exactly_once`).
- ``secure_mirror`` and ``secure_mirror_exactly_once``: the job on its own micro-batch source
  (``mirror.spark.source: mirror``, ``mirror.spark.tasks`` the task slots) with each guarantee.
- ``secure_mirror_loop_settings``: ``secure_mirror`` with the copy limit's client settings (:data:`LOOP_SETTINGS`);
  not run unless named: it asks how much of the distance to the copy limit is tuning. So do
  ``secure_mirror_exactly_once_loop_settings`` and ``mirrormaker2_loop_settings`` (MirrorMaker 2 takes the same
  settings from the same profile: render writes them into mm2.properties), which ask what the same tuning gives the
  other guarantee and MirrorMaker 2.
- ``secure_mirror_kafka_socket_buffers`` and ``mirrormaker2_kafka_socket_buffers``: the source consumers' receive
  buffer at Kafka's 64 KiB (:data:`KAFKA_SOCKET_BUFFERS`), not the OS's that render gives them; not run unless named.
  Results files before NOTES section 17 name the OS's ``*_os_socket_buffers`` and Kafka's the plain names.
- ``mirrormaker2_kafka_defaults``: MirrorMaker 2 with Kafka's client defaults where render sets its own
  (:data:`KAFKA_DEFAULTS`: the source consumer's 64 KiB receive buffer and 1 MiB a partition in a fetch, the target
  producer's 16 KiB batches, linger 5 ms and no compression), as most users run it; not run unless named
  (``scripts/bench --wan`` names it).
- ``secure_mirror_short_fetch_wait``: ``secure_mirror`` whose source consumers wait at most 10 ms for a fetch
  (:data:`SHORT_FETCH_WAIT`, the continuous trigger's setting); not run unless named.
- ``secure_mirror_fixed_sizes``: ``secure_mirror`` with the client sizes it had before NOTES section 19, when a
  profile sets neither: batches of 256 KiB at every partition count and Kafka's 1 MiB a partition in a fetch
  (:data:`FIXED_FETCH`); not run unless named.
- ``secure_mirror_spark_ui``: ``secure_mirror`` with Spark's UI on, as every job ran before NOTES section 20 (render
  now turns it off unless the profile sets ``spark.ui.enabled`` or ``spark.ui.port``); not run unless named.
- ``secure_mirror_parallel_gc``, ``secure_mirror_c2_only`` and ``copy_limit_c2_only``: the job's driver JVM on the
  parallel collector, and the job's or the copy limit's JVM compiling without the C1 tiers
  (``-XX:-TieredCompilation``), NOTES section 20; not run unless named.
- ``secure_mirror_kafka_source`` and ``secure_mirror_exactly_once_kafka_source``: the job on Spark's Kafka source, as
  it was before issue 26; not run unless named (at thousands of partitions it takes the whole time limit).
- ``secure_mirror_fetch_ahead`` and ``secure_mirror_exactly_once_fetch_ahead``: the job's source tasks polling their
  consumers on a thread of their own, up to 100 MiB each held ahead (:data:`FETCH_AHEAD`, docs/source.md); not run
  unless named. ``secure_mirror_fetch_ahead_small``: responses of 8 MiB and 16 MiB held ahead
  (:data:`FETCH_AHEAD_SMALL`), two responses ahead; not run unless named. ``secure_mirror_2g`` and
  ``secure_mirror_fetch_ahead_2g``: the job, and the job with 100 MiB ahead, in a driver JVM of 2 GiB instead of the
  sandbox's 512 MiB (:data:`HEAP_2G`): what fetching ahead costs where the heap has room; not run unless named.

A contender whose ``exactly_once`` is set writes in transactions and is counted as a read_committed reader sees the
target (``benchmarks/harness/committed.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from secure_mirror.profile.delivery import SMALLEST_BATCH


@dataclass(frozen=True)
class Contender:
    label: str
    runs: Literal["copy_limit", "mirrormaker2", "job"]
    exactly_once: bool = False
    source: Literal["mirror", "kafka"] | None = None  # the job's micro-batch source
    default: bool = True  # run when --contenders is not given
    loop_settings: bool = False  # the job with the copy limit's client settings (:data:`LOOP_SETTINGS`)
    source_client_options: tuple[tuple[str, object], ...] = ()  # added to the profile's source.client_options
    jvm_options: tuple[str, ...] = ()  # the copy limit's JVM options: copylimit.{producer,consumer}.* settings
    batch_size: int | None = None  # the job's mirror.delivery.batch_size (None: the profile's, or the job's rule)
    spark_conf: tuple[tuple[str, object], ...] = ()  # added to the job's mirror.spark.conf
    mm2_properties: tuple[tuple[str, object], ...] = ()  # mm2.properties lines, "{source}"/"{target}" the aliases

    def spark_conf_keys(self) -> tuple[str, ...]:
        """The Spark conf keys this contender adds to the job's profile."""
        return tuple(key for key, _ in self.spark_conf)


# Kafka's consumers ask for a 64 KiB receive buffer (receive.buffer.bytes); render leaves the mirror's source
# consumers' to the OS (secure_mirror.profile.models.SOURCE_JAVA_CONSUMER_DEFAULTS), which this puts back (NOTES
# section 17: over loopback, fetch responses of 50 MiB took the whole 30 s request timeout with 64 KiB).
KAFKA_SOCKET_BUFFERS = (("receive.buffer.bytes", 65536),)
# A consumer sends its next fetch while its last response is still being handed over, for the partitions it holds
# nothing of: with thousands of partitions a task, those are partitions already at their range's end, so that fetch
# waits the whole fetch.max.wait.ms (500 ms) at the broker, and the consumer sends no other fetch to that broker
# until it returns (NOTES section 17). The mirror's source never needs a fetch to wait: its ranges end at offsets the
# source had when the batch was planned.
SHORT_FETCH_WAIT = (("fetch.max.wait.ms", 10),)
# The job's client sizes before NOTES section 19, when a profile sets neither: every partition's share of a fetch at
# Kafka's 1 MiB, and batches of 256 KiB at every partition count.
FIXED_FETCH = (("max.partition.fetch.bytes", 1_048_576),)
# each source task may hold 100 MiB of records fetched ahead: two of Kafka's 50 MiB responses (jvm/sink FetchAhead)
FETCH_AHEAD_KEY = "spark.securemirror.source.fetchAhead"  # jvm/sink SourceSettings.FETCH_AHEAD
FETCH_AHEAD = ((FETCH_AHEAD_KEY, "100m"),)
# ... or 16 MiB ahead of responses of 8 MiB (a task's share of a fetch sized for those: SourceSettings.consumerSettings)
FETCH_AHEAD_SMALL = ((FETCH_AHEAD_KEY, "16m"),)
SMALL_RESPONSES = (("fetch.max.bytes", 8 * 1024 * 1024),)
HEAP_2G = (("spark.driver.memory", "2g"),)  # the job's driver JVM, the executor under local[N]
# Kafka 4.2's own client defaults where render writes the profile's into mm2.properties: what MirrorMaker 2 runs with
# from a hand-written mm2.properties (the source consumer's receive buffer and its share of a fetch a partition; the
# target producer's batch, linger and compression).
KAFKA_DEFAULTS = (
    ("{source}.consumer.receive.buffer.bytes", 65536),
    ("{source}.consumer.max.partition.fetch.bytes", 1_048_576),
    ("{target}.producer.batch.size", 16384),
    ("{target}.producer.linger.ms", 5),
    ("{target}.producer.compression.type", "none"),
)


CONTENDERS = {
    "copy_limit": Contender("copy limit", "copy_limit"),
    "mirrormaker2": Contender("MirrorMaker 2", "mirrormaker2"),
    "mirrormaker2_exactly_once": Contender("MirrorMaker 2, exactly-once (KIP-618)", "mirrormaker2", exactly_once=True),
    "secure_mirror": Contender("secure_mirror (mirror source), at_least_once", "job", source="mirror"),
    "secure_mirror_exactly_once": Contender(
        "secure_mirror (mirror source), exactly_once", "job", exactly_once=True, source="mirror"
    ),
    "secure_mirror_fetch_ahead": Contender(
        "secure_mirror (mirror source), at_least_once, fetching ahead",
        "job",
        source="mirror",
        default=False,
        spark_conf=FETCH_AHEAD,
    ),
    "secure_mirror_exactly_once_fetch_ahead": Contender(
        "secure_mirror (mirror source), exactly_once, fetching ahead",
        "job",
        exactly_once=True,
        source="mirror",
        default=False,
        spark_conf=FETCH_AHEAD,
    ),
    "secure_mirror_fetch_ahead_small": Contender(
        "secure_mirror (mirror source), at_least_once, fetching ahead 16 MiB of 8 MiB responses",
        "job",
        source="mirror",
        default=False,
        source_client_options=SMALL_RESPONSES,
        spark_conf=FETCH_AHEAD_SMALL,
    ),
    "secure_mirror_2g": Contender(
        "secure_mirror (mirror source), at_least_once, 2 GiB heap",
        "job",
        source="mirror",
        default=False,
        spark_conf=HEAP_2G,
    ),
    "secure_mirror_fetch_ahead_2g": Contender(
        "secure_mirror (mirror source), at_least_once, fetching ahead, 2 GiB heap",
        "job",
        source="mirror",
        default=False,
        spark_conf=FETCH_AHEAD + HEAP_2G,
    ),
    "copy_limit_1mib_batches": Contender(
        "copy limit, 1 MiB batches at every size",
        "copy_limit",
        default=False,
        jvm_options=("-Dcopylimit.producer.batch.size=1048576",),
    ),
    "copy_limit_max_poll_10000": Contender(
        "copy limit, max.poll.records 10,000",
        "copy_limit",
        default=False,
        jvm_options=("-Dcopylimit.consumer.max.poll.records=10000",),
    ),
    "copy_limit_c2_only": Contender(
        "copy limit, its JVM's JIT without its C1 tiers",
        "copy_limit",
        default=False,
        jvm_options=("-XX:-TieredCompilation",),
    ),
    "secure_mirror_loop_settings": Contender(
        "secure_mirror (mirror source), at_least_once, the copy limit's client settings",
        "job",
        source="mirror",
        default=False,
        loop_settings=True,
    ),
    "secure_mirror_fixed_sizes": Contender(
        "secure_mirror (mirror source), at_least_once, batches of 256 KiB and Kafka's fetch of 1 MiB a partition",
        "job",
        source="mirror",
        default=False,
        source_client_options=FIXED_FETCH,
        batch_size=SMALLEST_BATCH,
    ),
    "secure_mirror_exactly_once_loop_settings": Contender(
        "secure_mirror (mirror source), exactly_once, the copy limit's client settings",
        "job",
        exactly_once=True,
        source="mirror",
        default=False,
        loop_settings=True,
    ),
    "mirrormaker2_loop_settings": Contender(
        "MirrorMaker 2, the copy limit's client settings", "mirrormaker2", default=False, loop_settings=True
    ),
    "secure_mirror_kafka_socket_buffers": Contender(
        "secure_mirror (mirror source), at_least_once, Kafka's 64 KiB receive buffer",
        "job",
        source="mirror",
        default=False,
        source_client_options=KAFKA_SOCKET_BUFFERS,
    ),
    "mirrormaker2_kafka_socket_buffers": Contender(
        "MirrorMaker 2, Kafka's 64 KiB receive buffer",
        "mirrormaker2",
        default=False,
        source_client_options=KAFKA_SOCKET_BUFFERS,
    ),
    "mirrormaker2_kafka_defaults": Contender(
        "MirrorMaker 2, Kafka's client defaults", "mirrormaker2", default=False, mm2_properties=KAFKA_DEFAULTS
    ),
    "secure_mirror_short_fetch_wait": Contender(
        "secure_mirror (mirror source), at_least_once, fetch.max.wait.ms 10",
        "job",
        source="mirror",
        default=False,
        source_client_options=SHORT_FETCH_WAIT,
    ),
    "secure_mirror_spark_ui": Contender(
        "secure_mirror (mirror source), at_least_once, Spark's UI on (as before NOTES section 20)",
        "job",
        source="mirror",
        default=False,
        spark_conf=(("spark.ui.enabled", "true"),),
    ),
    "secure_mirror_parallel_gc": Contender(
        "secure_mirror (mirror source), at_least_once, the driver JVM on the parallel collector",
        "job",
        source="mirror",
        default=False,
        spark_conf=(("spark.driver.extraJavaOptions", "-XX:+UseParallelGC"),),
    ),
    "secure_mirror_c2_only": Contender(
        "secure_mirror (mirror source), at_least_once, the driver JVM's JIT without its C1 tiers",
        "job",
        source="mirror",
        default=False,
        spark_conf=(("spark.driver.extraJavaOptions", "-XX:-TieredCompilation"),),
    ),
    "secure_mirror_kafka_source": Contender(
        "secure_mirror (spark kafka source), at_least_once", "job", source="kafka", default=False
    ),
    "secure_mirror_exactly_once_kafka_source": Contender(
        "secure_mirror (spark kafka source), exactly_once", "job", exactly_once=True, source="kafka", default=False
    ),
}
DEFAULT = [name for name, c in CONTENDERS.items() if c.default]
# The copy limit's tuning that a profile can give the job, as NOTES sections 14 and 15 measured it (the copy limit has
# since left max.poll.records at Kafka's 500 and sized its batches from its partitions, section 18): the consumer's
# max.poll.records, the producer's batches (mirror.delivery) and pool. Not its per-partition fetch size, which it
# sizes from its own partitions (it differs from Kafka's default only below about 50 partitions a loop).
LOOP_SETTINGS = {
    "source_client_options": {"max.poll.records": 10_000},
    "delivery": {"batch_size": 1_048_576, "linger_ms": 100},
    "target_client_options": {"buffer.memory": 192 * 1_048_576},
}
LABELS = {name: c.label for name, c in CONTENDERS.items()}


def names(text: str) -> list[str]:
    """``--contenders a,b``: the names, each known (argparse's ``type``)."""
    given = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in given if n not in CONTENDERS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown contender(s) {', '.join(unknown)}; known: {', '.join(CONTENDERS)}")
    return given


def mm2_exactly_once(target_alias: str) -> dict[str, str]:
    """mm2.properties for MirrorMaker 2 with exactly-once, as Kafka's documentation asks of a dedicated cluster
    (docs/ops.html, "Exactly once", since 3.5.0): exactly-once source support for the worker that writes to the
    target (``<target>.`` reaches that worker's config, MirrorMakerConfig.workerConfig), and the internal REST server
    of KIP-710 on which the nodes fence and forward task configs (``listeners`` on an ephemeral port of localhost, as
    Kafka's own DedicatedMirrorIntegrationTest runs it: one node here). The source consumer's
    ``isolation.level=read_committed`` that the same page asks for is rendered from the profile
    (``mirror.source_isolation_level``); the transactions end where the task's poll ends (``transaction.boundary``
    left at its default, ``poll``)."""
    return {
        f"{target_alias}.exactly.once.source.support": "enabled",
        "dedicated.mode.enable.internal.rest": "true",
        "listeners": "http://localhost:0",
    }


def mm2_exactly_once_acls(source_alias: str, principals: tuple[str, ...]) -> list[dict]:
    """The target's grants MirrorMaker 2's exactly-once worker needs beyond a plain one (docs/connect.html, "ACL
    requirements"): WRITE and DESCRIBE on the worker's transactional id ``connect-cluster-<group.id>`` and on its
    connectors' tasks' ``<group.id>-<connector>-<task>`` (as a prefix), its group.id ``<source>-mm2`` in dedicated
    mode (MirrorMakerConfig.workerConfig). The offsets topic and IdempotentWrite are in the harness's broad grants."""
    group = f"{source_alias}-mm2"
    return [
        {
            "resource_type": "TRANSACTIONAL_ID",
            "resource_name": name,
            "pattern_type": pattern,
            "principal": principal,
            "operation": operation,
        }
        for name, pattern in ((f"connect-cluster-{group}", "LITERAL"), (f"{group}-", "PREFIXED"))
        for principal in principals
        for operation in ("WRITE", "DESCRIBE")
    ]


def profile_edit(name: str, tasks: int) -> Callable[[dict], None]:
    """The profile of contender ``name`` at ``tasks`` task slots: the job on ``local[tasks]`` (with its own source,
    ``mirror.spark.tasks: tasks``) and its guarantee; MirrorMaker 2 with ``tasks.max`` tasks, and exactly-once for
    ``mirrormaker2_exactly_once``, as mm2.properties lines of the profile (``mirror.mm2.properties``, which render
    writes with the project's Java properties encoder)."""
    contender = CONTENDERS[name]

    def edit(data: dict) -> None:
        spark = data["mirror"].setdefault("spark", {})
        spark["master"] = f"local[{tasks}]"
        if contender.source is not None:
            spark["source"] = contender.source
            if contender.source == "mirror":
                spark["tasks"] = tasks
        if contender.runs == "job" and contender.exactly_once:
            data["mirror"].setdefault("delivery", {})["guarantee"] = "exactly_once"
        if contender.loop_settings:
            data["mirror"].setdefault("delivery", {}).update(LOOP_SETTINGS["delivery"])
            for side in ("source", "target"):
                data[side].setdefault("client_options", {}).update(LOOP_SETTINGS[f"{side}_client_options"])
        if contender.batch_size is not None:
            data["mirror"].setdefault("delivery", {})["batch_size"] = contender.batch_size
        if contender.source_client_options:
            data["source"].setdefault("client_options", {}).update(dict(contender.source_client_options))
        if contender.spark_conf:
            spark.setdefault("conf", {}).update(dict(contender.spark_conf))
        properties: dict[str, object] = {"tasks.max": tasks}
        if contender.mm2_properties:
            aliases = {"source": data["source"]["alias"], "target": data["target"]["alias"]}
            properties.update({key.format(**aliases): value for key, value in contender.mm2_properties})
        if contender.runs == "mirrormaker2" and contender.exactly_once:
            properties.update(mm2_exactly_once(data["target"]["alias"]))
        data["mirror"]["mm2"] = {"properties": properties}

    return edit
