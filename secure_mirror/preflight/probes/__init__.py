"""What pre-flight asks, and nothing else: the KDCs, the brokers, the local files and Kafka's Java client, each
answered as plain data (dicts, lists, dataclasses, error codes), never a Check. What an answer means is decided in
``preflight.checks``; a module here does not import it, nor ``preflight.model``.

The answers that cross into the checks are typed (TypedDicts, ``@final`` so that ``"error" in answer`` tells one
kind from another for mypy), each beside the probe that gives it: the checks import the types, so mypy checks where
asking meets judging. The unit tests feed the checks the same shapes as plain dicts."""

from typing import TypedDict, final


@final
class Failed(TypedDict):
    """The thing could not be asked, or its answer could not be read: why, in words."""

    error: str
