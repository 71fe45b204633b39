#!/usr/bin/env bash
# Run the secure-mirror job with spark-submit (master yarn, deploy mode cluster).
# Rendered by secure-mirror; the Kafka options are in <TMP>/out/spark/*-options.json.
# Keytabs and krb5.conf travel with --files under distinct names; the JAAS options refer to those names.
set -euo pipefail
SPARK_SUBMIT="${SPARK_SUBMIT:-spark-submit}"
# The files ship under the names of these private copies: only YARN renames with --files local#name, and
# Spark ships a symbolic link under its target's name. umask 077 keeps Spark's own copies here private too.
umask 077
cd -- <TMP>/out/spark
install -m 600 -- <TMP>/source/mirror.keytab source-mirror.keytab
install -m 600 -- <TMP>/target/mirror.keytab target-mirror.keytab
install -m 600 -- <TMP>/out/krb5.conf krb5.conf
# Cluster mode: the driver runs remotely and needs the secure_mirror package.
PY_FILES="$(mktemp -d)/secure_mirror.zip"
python3 -m zipfile -c "$PY_FILES" <REPO>/secure_mirror
exec "$SPARK_SUBMIT" \
  --master yarn \
  --deploy-mode cluster \
  --jars <REPO>/.deps/spark-jars/commons-pool2-2.12.0.jar,<REPO>/.deps/spark-jars/kafka-clients-3.9.0.jar,<REPO>/.deps/spark-jars/secure-mirror-sink.jar,<REPO>/.deps/spark-jars/spark-sql-kafka-0-10_2.13-4.0.0.jar,<REPO>/.deps/spark-jars/spark-token-provider-kafka-0-10_2.13-4.0.0.jar \
  --files <TMP>/out/spark/source-mirror.keytab,<TMP>/out/spark/target-mirror.keytab,<TMP>/out/spark/krb5.conf,<TMP>/out/spark/source-options.json,<TMP>/out/spark/sink-options.json,<TMP>/out/spark/job.json \
  --py-files "$PY_FILES" \
  --conf spark.executor.instances=2 \
  --conf spark.ui.enabled=false \
  --conf spark.authenticate=true \
  --conf spark.network.crypto.enabled=true \
  --conf spark.io.encryption.enabled=true \
  --conf spark.task.maxFailures=70 \
  --conf 'spark.driver.extraJavaOptions="-Djava.security.krb5.conf=krb5.conf"' \
  --conf 'spark.executor.extraJavaOptions="-Djava.security.krb5.conf=krb5.conf"' \
  <REPO>/secure_mirror/run/job/__main__.py --options-dir . "$@"
