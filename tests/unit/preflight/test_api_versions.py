"""ApiVersions v0 encoding and what the offered versions say about the Kafka line (the real brokers answer in
tests/integration/test_old_broker.py)."""

from __future__ import annotations

import struct

import pytest

from secure_mirror.preflight.probes import api_versions as av


def reply(versions: dict[int, tuple[int, int]], error: int = 0, correlation: int = 1) -> bytes:
    body = struct.pack(">ihi", correlation, error, len(versions))
    return body + b"".join(struct.pack(">hhh", key, low, high) for key, (low, high) in versions.items())


def test_the_request_is_api_versions_v0_with_our_client_id():
    data = av.request(7)
    size, key, version, correlation, length = struct.unpack_from(">ihhih", data)
    assert (size, key, version, correlation) == (len(data) - 4, 18, 0, 7)
    assert data[14 : 14 + length] == b"secure-mirror-preflight"


@pytest.mark.parametrize(
    "versions, line, reports, idempotent",
    [
        ({3: (0, 7), 18: (0, 2)}, "a Kafka older than 2.3", False, False),  # Kafka 2.2
        ({3: (0, 9), 18: (0, 3)}, "Kafka 2.3 to 2.7", True, False),  # Kafka 2.4 ... 2.7
        ({3: (0, 12), 18: (0, 3), 60: (0, 0)}, "Kafka 2.8 or later", True, True),  # DescribeCluster: 2.8
    ],
)
def test_the_kafka_line_follows_from_metadata_and_describe_cluster(versions, line, reports, idempotent):
    apis = av.parse(reply(versions))
    assert (apis.line, apis.reports_authorized_operations, apis.write_allows_idempotence) == (line, reports, idempotent)


@pytest.mark.parametrize(
    "data, reason",
    [
        (reply({3: (0, 7)}, error=35), "refused"),
        (reply({3: (0, 7)}, correlation=2), "another request"),
        (reply({3: (0, 7)})[:-2], "cut short"),
    ],
)
def test_bad_answers_are_refused_with_a_reason(data, reason):
    with pytest.raises(av.ApiVersionsError, match=reason):
        av.parse(data)
