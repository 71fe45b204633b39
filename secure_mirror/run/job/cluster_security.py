"""Before the first task: are Spark's own connections authenticated and encrypted where the profile requires it?

On a standalone or Kubernetes master the job's Kafka options (passwords included) reach executors in task closures,
and shipped keytabs are fetched from the driver, over Spark's own connections. Render turns their protection on for
YARN, which makes the secret per application; elsewhere the cluster's operators share the secret in its Spark
configuration (``spark-defaults.conf``), which spark-submit merges into the driver's configuration. The job asks
it before it creates its Spark context (a standalone master would start executors, and they fetch the shipped
keytabs at their start), and again of the running context, and refuses to go on without ``spark.authenticate`` and
one of ``SPARK_NETWORK_ENCRYPTION``.
"""

from __future__ import annotations

from collections.abc import Callable

from secure_mirror.profile.runtime import SPARK_NETWORK_ENCRYPTION


def cluster_security_problem(master: str, setting: Callable[[str], str | None]) -> str | None:
    """The sentence refusing the job when ``setting`` (the running context's configuration) leaves Spark's
    connections unauthenticated or in clear, or None."""

    def on(key: str) -> bool:
        return (setting(key) or "false").strip().lower() == "true"

    wanted = {
        "spark.authenticate": on("spark.authenticate"),
        "spark.network.crypto.enabled": any(on(key) for key in SPARK_NETWORK_ENCRYPTION),
    }
    missing = [key for key, present in wanted.items() if not present]
    if not missing:
        return None
    if master.startswith("k8s://"):
        fix = (
            "Set spark.authenticate and spark.network.crypto.enabled to true in mirror.spark.conf or the Spark "
            "configuration of the machine that submits (on Kubernetes Spark makes the secret for each application)"
        )
    else:
        fix = (
            "Set spark.authenticate, spark.authenticate.secret and spark.network.crypto.enabled in the cluster's "
            "Spark configuration (spark-defaults.conf on its master, its workers and the machine that submits)"
        )
    return (
        f"the Spark cluster at {master} does not authenticate and encrypt Spark's own connections "
        f"({' and '.join(f'{key}=true' for key in missing)} missing), which would carry the job's Kafka options and "
        f"keytabs to executors in clear; nothing was read or sent. {fix}, or accept clear text with "
        "mirror.spark.require_encrypted_cluster: false"
    )
