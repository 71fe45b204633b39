"""The Kafka clients' timeouts of a command's deadline (``--timeout S``: how long an answer, or a cut-over's step,
may wait), mapped in this one place, each held within its client's range.

A deadline is not one request's timeout. A step that may wait 15 minutes (a long drain) asks again and again until
its deadline has passed; each request of its clients needs no more than the client allows, and a setting out of
range stops the client before it is made (librdkafka: ``KafkaError _INVALID_ARG: Configuration property
"socket.timeout.ms" value 600000 is outside allowed range 10..300000``). The ranges:

- librdkafka (CONFIGURATION.md, 2.8): ``socket.timeout.ms`` 10 .. 300000; ``socket.connection.setup.timeout.ms``
  1000 .. 2147483647. A transactional producer refuses a ``socket.timeout.ms`` more than 100 ms above its
  ``transaction.timeout.ms`` (default 60000): "`socket.timeout.ms` must be set <= `transaction.timeout.ms` + 100".
- confluent-kafka's admin calls: ``request_timeout`` and ``operation_timeout``, seconds that librdkafka's
  ``AdminOptions`` take as 0 .. 3600000 ms (``ValueError`` beyond).
- Kafka's Java clients (``jvm/tools/JavaClientProbe.java``): ``request.timeout.ms`` and ``default.api.timeout.ms``
  are a Java ``int`` of at least 0.
"""

from __future__ import annotations

from collections.abc import Mapping

SOCKET_MS = (10, 300_000)  # socket.timeout.ms: one request on a broker's connection
CONNECTION_SETUP_MS = (1_000, 2**31 - 1)  # socket.connection.setup.timeout.ms: one connection's set-up
ADMIN_REQUEST_MS = (1, 3_600_000)  # an admin call's request_timeout / operation_timeout (0 would not wait at all)
JAVA_MS = (1, 2**31 - 1)  # the Java clients' request.timeout.ms, default.api.timeout.ms
TRANSACTION_MS = 60_000  # librdkafka's default transaction.timeout.ms


def _ms(seconds: float, bounds: tuple[int, int]) -> int:
    low, high = bounds
    return max(low, min(high, int(seconds * 1000)))


def librdkafka(seconds: float) -> dict[str, str]:
    """The settings of a librdkafka client whose answers may take ``seconds``: each request, and each connection's
    set-up (authentication included), may wait that long where librdkafka allows it, and as long as it allows if not."""
    return {
        "socket.timeout.ms": str(_ms(seconds, SOCKET_MS)),
        "socket.connection.setup.timeout.ms": str(_ms(seconds, CONNECTION_SETUP_MS)),
    }


def transactional(seconds: float, conf: Mapping[str, object]) -> dict[str, str]:
    """:func:`librdkafka`'s settings for a transactional producer of ``conf``, whose ``socket.timeout.ms`` may also be
    no more than 100 ms above its ``transaction.timeout.ms`` (``conf``'s, else the default)."""
    settings = librdkafka(seconds)
    most = int(str(conf.get("transaction.timeout.ms", TRANSACTION_MS))) + 100
    return {**settings, "socket.timeout.ms": str(min(int(settings["socket.timeout.ms"]), most))}


def admin_request(seconds: float) -> float:
    """``request_timeout=`` (and ``operation_timeout=``) of one confluent-kafka admin call, in seconds."""
    return _ms(seconds, ADMIN_REQUEST_MS) / 1000


def java_ms(seconds: float) -> int:
    """The Java clients' ``request.timeout.ms`` and ``default.api.timeout.ms``."""
    return _ms(seconds, JAVA_MS)
