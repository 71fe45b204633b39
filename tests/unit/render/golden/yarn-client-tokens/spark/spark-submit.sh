#!/usr/bin/env bash
# Run the secure-mirror job with spark-submit (master yarn, deploy mode client).
# Rendered by secure-mirror; the Kafka options are in <TMP>/out/spark/*-options.json.
# krb5.conf travels with --files under distinct names; the JAAS options refer to those names.
# source: executors log in with a Kafka delegation token the driver obtains here with the side's keytab (spark.kafka.clusters.source.*); that keytab does not ship.
# target: executors log in with a Kafka delegation token the driver obtains here with the side's keytab (spark.kafka.clusters.target.*); that keytab does not ship.
set -euo pipefail
SPARK_SUBMIT="${SPARK_SUBMIT:-spark-submit}"
# The files ship under the names of these private copies: only YARN renames with --files local#name, and
# Spark ships a symbolic link under its target's name. umask 077 keeps Spark's own copies here private too.
# Client mode: the driver runs here and reads the same options as the executors, so it needs
# the shipped names in its working directory too.
umask 077
cd -- <TMP>/out/spark
install -m 600 -- <TMP>/out/krb5.conf krb5.conf
# Hadoop: the cluster's client configuration (rendered from the profile's hadoop section), and krb5.conf for
# spark-submit's own login with --principal/--keytab (Spark obtains and renews the HDFS delegation tokens),
# after the JVM options the caller had set (kept; the later krb5.conf setting wins).
export HADOOP_CONF_DIR=<TMP>/out/hadoop
export SPARK_SUBMIT_OPTS="${SPARK_SUBMIT_OPTS:+$SPARK_SUBMIT_OPTS }"'"-Djava.security.krb5.conf=<TMP>/out/krb5.conf"'
exec "$SPARK_SUBMIT" \
  --master yarn \
  --deploy-mode client \
  --jars <REPO>/.deps/spark-jars/commons-pool2-2.12.0.jar,<REPO>/.deps/spark-jars/kafka-clients-3.9.0.jar,<REPO>/.deps/spark-jars/secure-mirror-sink.jar,<REPO>/.deps/spark-jars/spark-sql-kafka-0-10_2.13-4.0.0.jar,<REPO>/.deps/spark-jars/spark-token-provider-kafka-0-10_2.13-4.0.0.jar \
  --files <TMP>/out/spark/krb5.conf \
  --principal mirror/mirror.source.test@SOURCE.TEST \
  --keytab <TMP>/source/mirror.keytab \
  --conf spark.ui.enabled=false \
  --conf spark.authenticate=true \
  --conf spark.network.crypto.enabled=true \
  --conf spark.io.encryption.enabled=true \
  --conf spark.task.maxFailures=70 \
  --conf 'spark.driver.extraJavaOptions="-Djava.security.krb5.conf=<TMP>/out/krb5.conf" "-Djava.security.auth.login.config=<TMP>/out/source/jaas.conf"' \
  --conf 'spark.executor.extraJavaOptions="-Djava.security.krb5.conf=krb5.conf"' \
  --conf 'spark.yarn.am.extraJavaOptions="-Djava.security.krb5.conf=krb5.conf"' \
  --conf spark.kafka.clusters.source.auth.bootstrap.servers=kafka.source.test:9093 \
  --conf 'spark.kafka.clusters.source.target.bootstrap.servers.regex=\Qkafka.source.test:9093\E' \
  --conf spark.kafka.clusters.source.security.protocol=SASL_SSL \
  --conf spark.kafka.clusters.source.sasl.token.mechanism=SCRAM-SHA-512 \
  --conf spark.kafka.clusters.source.sasl.kerberos.service.name=kafka \
  --conf spark.kafka.clusters.source.ssl.truststore.type=PEM \
  --conf spark.kafka.clusters.source.ssl.truststore.location=<TMP>/ca.pem \
  --conf spark.kafka.clusters.source.kafka.sasl.mechanism=GSSAPI \
  --conf 'spark.kafka.clusters.source.kafka.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab="true" storeKey="true" useTicketCache="false" serviceName="kafka" keyTab="<TMP>/source/mirror.keytab" principal="mirror/mirror.source.test@SOURCE.TEST";' \
  --conf spark.kafka.clusters.source.kafka.ssl.endpoint.identification.algorithm=https \
  --conf spark.kafka.clusters.target.auth.bootstrap.servers=kafka.target.test:9093 \
  --conf 'spark.kafka.clusters.target.target.bootstrap.servers.regex=\Qkafka.target.test:9093\E' \
  --conf spark.kafka.clusters.target.security.protocol=SASL_SSL \
  --conf spark.kafka.clusters.target.sasl.token.mechanism=SCRAM-SHA-512 \
  --conf spark.kafka.clusters.target.sasl.kerberos.service.name=kafka \
  --conf spark.kafka.clusters.target.ssl.truststore.type=PEM \
  --conf spark.kafka.clusters.target.ssl.truststore.location=<TMP>/ca.pem \
  --conf spark.kafka.clusters.target.kafka.sasl.mechanism=GSSAPI \
  --conf 'spark.kafka.clusters.target.kafka.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab="true" storeKey="true" useTicketCache="false" serviceName="kafka" keyTab="<TMP>/target/mirror.keytab" principal="mirror/mirror.target.test@TARGET.TEST";' \
  --conf spark.kafka.clusters.target.kafka.ssl.endpoint.identification.algorithm=https \
  --conf spark.security.credentials.kafka.enabled=true \
  <REPO>/secure_mirror/run/job/__main__.py --options-dir <TMP>/out/spark "$@"
