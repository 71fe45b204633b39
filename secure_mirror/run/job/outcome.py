"""How the job ends: a refusal (restarting does not help) or a failure, as an exit code and one sentence."""

from __future__ import annotations

import re

from secure_mirror.errors import EXIT_FAILED, EXIT_REFUSED


class JobRefused(Exception):
    """The job cannot (or must not) go on, and starting it again would not help."""

    def __init__(self, message: str, exit_code: int = EXIT_REFUSED):
        super().__init__(message)
        self.exit_code = exit_code


KAFKA_ERROR = re.compile(r"org\.apache\.kafka\.[\w.]+\.(\w+(?:Exception|Error): [^\n]{1,300})")
SOURCE_GONE = (
    "source records the checkpoint expects are gone (a source topic was deleted or truncated): {}. "
    "Nothing was skipped; to go on, recreate the topic or start over with a new checkpoint location"
)

TARGET_GONE = (
    "the target lost a topic the job writes while it ran: {}. The records mirrored into it went with it, and the job "
    "stops rather than write on into a topic created again. To mirror it again from its start, run the job with a new "
    "checkpoint location"
)


def classify(error: BaseException, refused: JobRefused | None = None) -> tuple[int, str]:
    """The exit code and sentence of a failed query; ``refused``, when the job refused first, decides."""
    if refused is not None:
        return refused.exit_code, str(refused)
    text = str(error)
    if "TopicAuthorizationException" in text or "Not authorized to access topics" in text:
        return EXIT_REFUSED, (
            "a cluster refused the mirror identity access to a topic "
            f"({_first_line(text, 'uthoriz')}); grant the ACLs of the rendered acls/ folder"
        )
    if "failOnDataLoss" in text or "data may have been lost" in text or "UnknownTopicOrPartition" in text:
        return EXIT_REFUSED, SOURCE_GONE.format(_first_line(text, "lost"))
    if "mirror.ride_through_seconds" in text:  # the driver asked a cluster again for as long as the profile rides
        return EXIT_FAILED, _first_line(text, "mirror.ride_through_seconds")
    kafka = KAFKA_ERROR.search(text)  # the Kafka client's own words, rather than Spark's wrapping of them
    return EXIT_FAILED, f"the mirror query failed: {kafka.group(1) if kafka else _first_line(text, 'Exception')}"


def _first_line(text: str, needle: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if needle in line:
            return line[:400]
    return (lines[0] if lines else text)[:400]
