"""What pre-flight asks, and nothing else: the KDCs, the brokers, the local files and Kafka's Java client, each
answered as plain data (dicts, lists, dataclasses, error codes), never a Check. What an answer means is decided in
``preflight.checks``; a module here does not import it, nor ``preflight.model``."""
