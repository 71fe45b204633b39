"""A transactional id: whether a transactional producer may register it."""

from __future__ import annotations

from secure_mirror.kafka import timeouts
from secure_mirror.preflight.probes.kafka_admin import Admin, error_code


def transaction_probe(admin: Admin, transactional_id: str) -> str | None:
    """None when a transactional producer could register ``transactional_id`` (InitProducerId: WRITE on the id; no
    record is written, and the brokers forget an unused id after ``transactional.id.expiration.ms``), else the error
    code (``TRANSACTIONAL_ID_AUTHORIZATION_FAILED``; ``_TIMED_OUT`` and others: no answer)."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer(
        {
            **admin.conf,
            "transactional.id": transactional_id,
            **timeouts.transactional(admin.timeout, admin.conf),
            "error_cb": admin.on_error,
            "log_level": 0,
        }
    )  # "coordinator loading: retrying" is no news
    try:
        producer.init_transactions(admin.timeout * 2)
    except KafkaException as exc:
        return error_code(exc)
    return None
