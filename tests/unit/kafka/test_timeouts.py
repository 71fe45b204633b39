"""A command's deadline as the Kafka clients' timeouts (``kafka/timeouts.py``): within each client's range whatever
the deadline, the deadline itself where the range allows it; and the real librdkafka takes every value it maps,
where the deadline taken as one request's timeout (what ``cutover --timeout 600`` did) stops the client."""

from __future__ import annotations

import pytest

from secure_mirror.commands.arguments import MOST_SECONDS
from secure_mirror.kafka import timeouts

DEADLINES = [0.001, 0.5, 30.0, 240.0, 600.0, 900.0, 5000.0, MOST_SECONDS - 0.01]
NOWHERE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}  # no broker: the clients only check their settings


def _in(value: float, bounds: tuple[int, int]) -> bool:
    return bounds[0] <= value <= bounds[1]


@pytest.mark.parametrize("seconds", DEADLINES)
def test_every_deadline_maps_within_each_clients_range(seconds):
    settings = timeouts.librdkafka(seconds)
    assert _in(int(settings["socket.timeout.ms"]), timeouts.SOCKET_MS)
    assert _in(int(settings["socket.connection.setup.timeout.ms"]), timeouts.CONNECTION_SETUP_MS)
    assert _in(timeouts.admin_request(seconds) * 1000, timeouts.ADMIN_REQUEST_MS)
    assert _in(timeouts.java_ms(seconds), timeouts.JAVA_MS)


def test_the_deadline_itself_where_the_range_allows_it_and_the_ranges_end_beyond():
    assert timeouts.librdkafka(30) == {"socket.timeout.ms": "30000", "socket.connection.setup.timeout.ms": "30000"}
    assert timeouts.librdkafka(600) == {"socket.timeout.ms": "300000", "socket.connection.setup.timeout.ms": "600000"}
    assert timeouts.librdkafka(0.001) == {"socket.timeout.ms": "10", "socket.connection.setup.timeout.ms": "1000"}
    assert (timeouts.admin_request(900), timeouts.admin_request(5000)) == (900.0, 3600.0)
    assert timeouts.transactional(900, {})["socket.timeout.ms"] == "60100"
    assert timeouts.transactional(900, {"transaction.timeout.ms": "120000"})["socket.timeout.ms"] == "120100"
    assert timeouts.transactional(30, {})["socket.timeout.ms"] == "30000"
    assert (timeouts.java_ms(900), timeouts.java_ms(MOST_SECONDS - 0.01)) == (900_000, 999_999_990)


@pytest.mark.parametrize("seconds", [0.001, 600.0, 900.0, MOST_SECONDS - 0.01])
def test_librdkafka_takes_what_a_deadline_maps_to(seconds):
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    settings = {**NOWHERE, **timeouts.librdkafka(seconds)}
    Consumer({**settings, "group.id": "g", "session.timeout.ms": "10000"})  # as pre-flight's join probe
    Producer({**settings, "acks": "all"})
    Producer({**NOWHERE, **timeouts.transactional(seconds, NOWHERE), "transactional.id": "t"})
    longer = {**NOWHERE, "transaction.timeout.ms": "900000"}  # a profile's client option
    Producer({**longer, **timeouts.transactional(seconds, longer), "transactional.id": "t"})
    admin = AdminClient(settings)
    within = timeouts.admin_request(seconds)
    every = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    admin.describe_acls(every, request_timeout=within)  # the options are checked here, the answer never awaited
    admin.create_topics([NewTopic("t", 1, 1)], operation_timeout=within, request_timeout=within)


def test_a_deadline_taken_as_one_requests_timeout_stops_the_client():
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    with pytest.raises(KafkaException, match=r"socket.timeout.ms.* value 600000 is outside allowed range 10..300000"):
        AdminClient({**NOWHERE, "socket.timeout.ms": str(600 * 1000)})
