"""How the mirror writes (``mirror.delivery``): the guarantee, the producer's acknowledgements, idempotence,
compression and batching, and the batch size the job picks when the profile leaves it unset."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from secure_mirror.profile.base import Strict
from secure_mirror.profile.fields import Problem

Guarantee = Literal["at_least_once", "exactly_once"]
# The producer's batch.size when a profile leaves mirror.delivery.batch_size unset: the largest that lets every
# partition the job writes hold a batch at once in the producer's pool (buffer.memory), from 256 KiB (for as many
# partitions as Kafka's default pool holds such batches, 128, and more) to 1 MiB (for 32 and fewer; benchmarks/NOTES.md
# section 19). MirrorMaker 2, whose partitions render cannot know, gets the smallest.
SMALLEST_BATCH = 262_144
LARGEST_BATCH = 1_048_576
KAFKA_BUFFER_MEMORY = 33_554_432  # Kafka's default buffer.memory


def batch_size_for(partitions: int | None, pool: int) -> int:
    """The producer's batch.size for a job writing ``partitions`` partitions (unknown: the smallest) through a
    producer pool of ``pool`` bytes."""
    if not partitions or pool <= 0:
        return SMALLEST_BATCH
    return max(SMALLEST_BATCH, min(LARGEST_BATCH, pool // partitions))


class Delivery(Strict):
    # docs/exactly-once.md: exactly_once writes each source partition in transactions that also commit its position
    guarantee: Guarantee = Field("at_least_once", description="at_least_once or exactly_once (docs/exactly-once.md)")
    acks: Literal["all", "-1", "0", "1"] = "all"
    enable_idempotence: bool = True
    compression: Literal["none", "gzip", "snappy", "lz4", "zstd"] = "lz4"
    delivery_timeout_ms: int = Field(120000, gt=0)
    # Batching (benchmarks/NOTES.md): Kafka's defaults (16 KiB, 0-5 ms) send small requests; a mirror copying a
    # backlog fills bigger batches at once. Keep batch_size under the brokers' message.max.bytes (1 MiB default).
    linger_ms: int = Field(20, ge=0, le=60000, description="producer linger.ms")
    batch_size: int | None = Field(
        None,
        gt=0,
        le=1048576,
        description="producer batch.size in bytes; unset: the job sizes it from the partitions it writes, 256 KiB "
        "to 1 MiB (MirrorMaker 2: 256 KiB)",
    )

    @field_validator("acks", mode="before")
    @classmethod
    def _acks_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @model_validator(mode="after")
    def _transactions_need_idempotence(self) -> Delivery:
        if self.exactly_once and self.acks not in ("all", "-1"):
            raise Problem(
                "acks", "exactly_once needs acks: all (Kafka's transactions require it); drop acks or set all"
            )
        if self.exactly_once and not self.enable_idempotence:
            raise Problem(
                "enable_idempotence",
                "exactly_once needs enable_idempotence: true (transactions are "
                "idempotent); drop enable_idempotence or set it true",
            )
        return self

    @property
    def exactly_once(self) -> bool:
        return self.guarantee == "exactly_once"
