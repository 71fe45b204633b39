#!/usr/bin/env bash
# Run the secure-mirror job with spark-submit (master k8s://https://k8s.example.com:6443, deploy mode client).
# Rendered by secure-mirror; the Kafka options are in <TMP>/out/spark/*-options.json.
# Keytabs and krb5.conf travel with --files under distinct names; the JAAS options refer to those names.
set -euo pipefail
SPARK_SUBMIT="${SPARK_SUBMIT:-spark-submit}"
# Client mode: the driver runs here and reads the same options as the executors, so it needs
# the shipped names in its working directory too.
cd <TMP>/out/spark
ln -sfn <TMP>/source/mirror.keytab source-mirror.keytab
ln -sfn <TMP>/target/mirror.keytab target-mirror.keytab
ln -sfn <TMP>/out/krb5.conf krb5.conf
exec "$SPARK_SUBMIT" \
  --master k8s://https://k8s.example.com:6443 \
  --deploy-mode client \
  --jars <REPO>/.deps/spark-jars/commons-pool2-2.12.0.jar,<REPO>/.deps/spark-jars/kafka-clients-3.9.0.jar,<REPO>/.deps/spark-jars/secure-mirror-interceptor.jar,<REPO>/.deps/spark-jars/spark-sql-kafka-0-10_2.13-4.0.0.jar,<REPO>/.deps/spark-jars/spark-token-provider-kafka-0-10_2.13-4.0.0.jar \
  --files '<TMP>/source/mirror.keytab#source-mirror.keytab,<TMP>/target/mirror.keytab#target-mirror.keytab,<TMP>/out/krb5.conf#krb5.conf' \
  --conf spark.driver.extraJavaOptions=-Djava.security.krb5.conf=<TMP>/out/krb5.conf \
  --conf spark.executor.extraJavaOptions=-Djava.security.krb5.conf=krb5.conf \
  <REPO>/secure_mirror/run/job.py --options-dir <TMP>/out/spark "$@"
