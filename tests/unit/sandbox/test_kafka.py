"""The sandbox's broker helpers that need no broker."""

from secure_mirror.sandbox.kafka import cluster_id_for_cli


def test_cluster_ids_never_start_with_a_dash(monkeypatch):
    import uuid

    dashed = uuid.UUID(bytes=bytes([0xF8]) + bytes(15))  # base64 '-' is 62: 0b111110 -> first byte 0xF8..0xFB
    ids = iter([dashed, uuid.UUID(int=7)])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(ids))
    assert cluster_id_for_cli() == "AAAAAAAAAAAAAAAAAAAABw"
