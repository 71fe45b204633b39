"""Whether this machine's librdkafka client (confluent-kafka) can serve a profile, asked before any check runs.

Pre-flight, lag, verify and the run's inspection clients talk to the brokers through confluent-kafka. PyPI's wheel of
it carries a librdkafka without a GSSAPI provider, and a machine may have none at all: both are the environment's
problem (exit 4, with the fix), not a bug to report. The answer comes from the real client: a producer is built with
each SASL mechanism the profile uses and closed at once (no broker is named, so none is contacted; kinit is not run).
"""

from __future__ import annotations

from collections.abc import Iterable

from secure_mirror.errors import EnvironmentNotReady

INSTALL_HOW = (
    "in a clone of secure-mirror run scripts/setup (it builds librdkafka with SASL/GSSAPI and confluent-kafka against "
    "it); elsewhere install a librdkafka built with libsasl2 (e.g. Debian's librdkafka-dev with "
    "libsasl2-modules-gssapi-mit) and build confluent-kafka against it: "
    "pip install --no-binary confluent-kafka confluent-kafka"
)


def missing_client() -> str | None:
    """Why confluent-kafka cannot be imported here, or None."""
    try:
        import confluent_kafka  # noqa: F401 - imported to learn whether it can be
    except ImportError as exc:
        return f"confluent-kafka cannot be imported ({exc})"
    return None


def mechanism_problem(mechanism: str) -> str | None:
    """Why this librdkafka cannot use the SASL ``mechanism``, from the real client, or None."""
    from confluent_kafka import KafkaException, Producer

    conf = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": mechanism,
        "log_level": 0,
    }
    if mechanism == "GSSAPI":
        conf["sasl.kerberos.min.time.before.relogin"] = 0  # no kinit at all: only whether a provider exists
    elif mechanism == "OAUTHBEARER":
        conf["oauth_cb"] = lambda _config: ("", 0.0)
    else:
        conf.update({"sasl.username": "probe", "sasl.password": "probe"})
    try:
        Producer(conf).flush(0)
    except (KafkaException, ValueError, TypeError) as exc:
        return f"its librdkafka cannot use SASL {mechanism} ({exc})"
    return None


def require(mechanisms: Iterable[str | None], command: str) -> None:
    """Refuse (exit 4) when confluent-kafka is missing or lacks a mechanism in ``mechanisms``."""
    if (problem := missing_client()) is None:
        problems = [p for m in sorted({m for m in mechanisms if m}) if (p := mechanism_problem(m))]
        problem = "; ".join(problems) or None
    if problem is not None:
        raise EnvironmentNotReady(
            f"{command} needs confluent-kafka with a librdkafka that can log in: {problem}; {INSTALL_HOW}"
        )
