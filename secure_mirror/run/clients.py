"""librdkafka calls as one side's mirror identity, each in a process of its own (``call_isolated``) with the
profile's krb5.conf and a private credential cache: lag and verify read both clusters with the same identities
the job uses."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from secure_mirror.kafka.admin_ops import LOG
from secure_mirror.kafka.identity import ClientConf, KafkaIdentity
from secure_mirror.kafka.oauth import token_served
from secure_mirror.profile.models import Profile, Side
from secure_mirror.render import krb5, librdkafka


class SideClients:
    """``with SideClients(profile) as clients: clients.call("source", fn, *args)``: ``fn(conf, *args)``."""

    def __init__(self, profile: Profile):
        self.profile = profile
        self.folder: Path | None = None

    def __enter__(self) -> SideClients:
        self.folder = Path(tempfile.mkdtemp(prefix="secure-mirror-clients-"))  # mode 0700
        krb5.write_into(self.profile, self.folder)
        return self

    def __exit__(self, *_exc) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _entered(self) -> Path:
        if self.folder is None:
            raise RuntimeError("SideClients is used outside its with block")
        return self.folder

    def identity(self, side: Side) -> KafkaIdentity:
        cluster, folder = self.profile.cluster(side), self._entered()
        ccache = str(folder / f"{side}.ccache") if self.profile.uses_kerberos else None
        identity = librdkafka.identity(
            cluster, side, ccache=ccache, krb5_config=krb5.krb5_conf_path(self.profile, folder)
        )
        if side == "source":  # lag and verify see the source as the job reads it (end offsets, records)
            identity = identity.with_settings(self.profile.mirror.source_consumer_settings)
        # A group under the prefix the rendered ACLs grant READ on (nothing is ever committed to it).
        return identity.with_settings({"group.id": f"{self.profile.group_prefix}-inspect"})

    def conf(self, side: Side) -> ClientConf:
        return self.identity(side).conf

    def call(self, side: Side, fn, *args, **kwargs):
        return self.identity(side).call(fn, *args, **kwargs)


# ---- functions run in the isolated process ---------------------------------------------------------------
def _consumer(conf: dict):
    from confluent_kafka import Consumer

    return token_served(
        Consumer(
            {
                "group.id": "secure-mirror-inspect",
                **conf,
                "logger": LOG,
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
            }
        ),
        conf,
    )


def watermarks(
    conf: dict, topics: list[str] | None = None, java_pattern: str | None = None, timeout: float = 30.0
) -> dict[tuple[str, int], tuple[int, int]]:
    """(topic, partition) -> (low, high) for ``topics`` and/or the topics ``java_pattern`` selects."""
    from confluent_kafka import TopicPartition

    from secure_mirror.profile.javaregex import compile_java

    consumer = _consumer(conf)
    try:
        metadata = consumer.list_topics(timeout=timeout)
        pattern = compile_java(java_pattern) if java_pattern else None
        wanted = set(topics or [])
        out = {}
        for name, topic in metadata.topics.items():
            if name in wanted or (pattern is not None and pattern.fullmatch(name)):
                for partition in topic.partitions:
                    low, high = consumer.get_watermark_offsets(TopicPartition(name, partition), timeout=timeout)
                    out[(name, partition)] = (low, high)
        return out
    finally:
        consumer.close()
