#!/usr/bin/env bash
# Run the secure-mirror job with spark-submit (master local[2,70], deploy mode client).
# Rendered by secure-mirror; the Kafka options are in <TMP>/out/spark/*-options.json.
set -euo pipefail
SPARK_SUBMIT="${SPARK_SUBMIT:-spark-submit}"
exec "$SPARK_SUBMIT" \
  --master 'local[2,70]' \
  --deploy-mode client \
  --jars <REPO>/.deps/spark-jars/commons-pool2-2.12.0.jar,<REPO>/.deps/spark-jars/kafka-clients-3.9.0.jar,<REPO>/.deps/spark-jars/secure-mirror-sink.jar,<REPO>/.deps/spark-jars/spark-sql-kafka-0-10_2.13-4.0.0.jar,<REPO>/.deps/spark-jars/spark-token-provider-kafka-0-10_2.13-4.0.0.jar \
  --conf spark.ui.enabled=false \
  --conf spark.task.maxFailures=70 \
  <REPO>/secure_mirror/run/job/__main__.py --options-dir <TMP>/out/spark "$@"
