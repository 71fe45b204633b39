#!/usr/bin/env bash
# ACLs the mirroring identities need, rendered by secure-mirror for review by a security team.
# The same bindings are in source.acls.json and target.acls.json (machine-readable).
#
# Run with an ADMIN client configuration for each cluster (the mirror identity cannot grant ACLs):
#   SOURCE_ADMIN_CONFIG=/path/admin-source.properties TARGET_ADMIN_CONFIG=/path/admin-target.properties ./apply-acls.sh
set -euo pipefail
KAFKA_ACLS="${KAFKA_ACLS:-kafka-acls.sh}"

# ---- target cluster tgt: principal User:mirror
# Topics: WRITE + DESCRIBE, and CREATE so missing target topics can be created.
# Topic shape: ALTER_CONFIGS + ALTER on the target topics (mirror.topic_shape: the target topics take the source topics' own configs and partition counts, docs/replica.md).
# Groups: READ + DESCRIBE on the consumer groups mirror.groups syncs (their translated offsets are committed here; the commits also need READ on the target topics, granted above), and the offset map and checkpoints topics the mirror keeps.
# Heartbeats: WRITE + DESCRIBE + CREATE + READ on the heartbeats topic, LITERAL (MirrorMaker 2's format; the job writes one every mirror.heartbeats.interval_seconds while the flow is alive, lag and verify read it).
: "${TARGET_ADMIN_CONFIG:?set it to an admin client config for the target cluster}"
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Write --topic src.orders --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --topic src.orders --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Create --topic src.orders --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --topic src.orders --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation AlterConfigs --topic src.orders --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Alter --topic src.orders --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Write --topic src.payments --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --topic src.payments --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Create --topic src.payments --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --topic src.payments --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation AlterConfigs --topic src.payments --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Alter --topic src.payments --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --group secure-mirror-src-tgt- --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --group app. --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --group app. --resource-pattern-type prefixed
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --group billing --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --group billing --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Create --topic secure_mirror.offset-map.src.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --topic secure_mirror.offset-map.src.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Write --topic secure_mirror.offset-map.src.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --topic secure_mirror.offset-map.src.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Create --topic src.checkpoints.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --topic src.checkpoints.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Write --topic src.checkpoints.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --topic src.checkpoints.internal --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Write --topic heartbeats --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Describe --topic heartbeats --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Create --topic heartbeats --resource-pattern-type literal
"$KAFKA_ACLS" --bootstrap-server kafka.target.test:9093 --command-config "$TARGET_ADMIN_CONFIG" \
  --add --allow-principal User:mirror --allow-host '*' --operation Read --topic heartbeats --resource-pattern-type literal
