"""Thin wrappers over confluent-kafka (librdkafka with GSSAPI): admin calls run per identity, isolated."""
