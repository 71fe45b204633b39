"""What the driver's Kafka admin calls answered: the Java exception behind a Py4J error, whether trying again may
work, and the partition counts of one side's bulk answer."""

from __future__ import annotations

from secure_mirror.run.job.outcome import JobRefused


def _cause(error):
    java = getattr(error, "java_exception", None)
    while (
        java is not None
        and java.getCause() is not None
        and java.getClass().getSimpleName() in ("ExecutionException", "CompletionException")
    ):
        java = java.getCause()
    return java


def cause_name(error) -> str:
    if isinstance(error, KafkaUnanswered):
        return error.name
    java = _cause(error)
    return java.getClass().getSimpleName() if java is not None else type(error).__name__


class KafkaUnanswered(RuntimeError):
    """A Kafka ``RetriableException`` named in an answer the driver asked for in bulk (jvm/sink
    ``securemirror.driver``): trying again later may work."""

    def __init__(self, name: str, topic: str):
        super().__init__(f"{name} describing topic {topic}")
        self.name = name


def retriable(error) -> bool:
    """A Kafka ``RetriableException`` (a broker that did not answer in time ...): trying again later may work."""
    java = _cause(error)
    kind = java.getClass() if java is not None else None
    while kind is not None:
        if kind.getName() == "org.apache.kafka.common.errors.RetriableException":
            return True
        kind = kind.getSuperclass()
    return False


# What a target says of a topic config it will not take (a name its Kafka does not know, a value beyond its limits).
REFUSED_CONFIG = ("InvalidConfigurationException", "PolicyViolationException", "InvalidRequestException")


def partition_counts(topics: list[str], counts: dict[str, int], errors: dict[str, list]) -> dict[str, int | None]:
    """The counts of ``topics`` from one side's answer: None for a topic it does not have. The first other error, in
    the order asked, stops: a retriable one (a broker that did not answer in time ...) fails the query, and --supervise
    starts it again; any other is the identity's DESCRIBE grant."""
    for topic in topics:
        if topic not in errors:
            continue
        name, may_retry = errors[topic]
        if name == "UnknownTopicOrPartitionException":
            continue
        if may_retry:
            raise KafkaUnanswered(name, topic)
        raise JobRefused(f"cannot describe topic {topic}: {name}; check the DESCRIBE ACL of the mirror identity")
    return {topic: counts.get(topic) for topic in topics}
