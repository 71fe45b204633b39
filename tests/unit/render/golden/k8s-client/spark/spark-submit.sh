#!/usr/bin/env bash
# Run the secure-mirror job with spark-submit (master k8s://https://k8s.example.com:6443, deploy mode client).
# Rendered by secure-mirror; the Kafka options are in <TMP>/out/spark/*-options.json.
# Keytabs and krb5.conf travel with --files under distinct names; the JAAS options refer to those names.
set -euo pipefail
SPARK_SUBMIT="${SPARK_SUBMIT:-spark-submit}"
# The files ship under the names of these private copies: only YARN renames with --files local#name, and
# Spark ships a symbolic link under its target's name. umask 077 keeps Spark's own copies here private too.
# Client mode: the driver runs here and reads the same options as the executors, so it needs
# the shipped names in its working directory too.
umask 077
cd -- <TMP>/out/spark
install -m 600 -- <TMP>/source/mirror.keytab source-mirror.keytab
install -m 600 -- <TMP>/target/mirror.keytab target-mirror.keytab
install -m 600 -- <TMP>/out/krb5.conf krb5.conf
exec "$SPARK_SUBMIT" \
  --master k8s://https://k8s.example.com:6443 \
  --deploy-mode client \
  --jars <REPO>/.deps/spark-jars/commons-pool2-2.12.0.jar,<REPO>/.deps/spark-jars/kafka-clients-3.9.0.jar,<REPO>/.deps/spark-jars/secure-mirror-sink.jar,<REPO>/.deps/spark-jars/spark-sql-kafka-0-10_2.13-4.0.0.jar,<REPO>/.deps/spark-jars/spark-token-provider-kafka-0-10_2.13-4.0.0.jar \
  --files <TMP>/out/spark/source-mirror.keytab,<TMP>/out/spark/target-mirror.keytab,<TMP>/out/spark/krb5.conf \
  --conf spark.ui.enabled=false \
  --conf spark.task.maxFailures=70 \
  --conf 'spark.driver.extraJavaOptions="-Djava.security.krb5.conf=<TMP>/out/krb5.conf"' \
  --conf 'spark.executor.extraJavaOptions="-Djava.security.krb5.conf=krb5.conf"' \
  <REPO>/secure_mirror/run/job/__main__.py --options-dir <TMP>/out/spark "$@"
