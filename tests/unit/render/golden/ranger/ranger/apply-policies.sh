#!/usr/bin/env bash
# Apache Ranger policies the mirroring identity needs, rendered by secure-mirror for review by a security team
# (docs/ranger.md). The same policies are in source.policies.json and target.policies.json (Ranger's REST API v2).
#
# Each policy is created, or replaced when its Ranger service already holds a policy of that name
# (GET, then PUT or POST on Ranger Admin's /service/public/v2/api). Run as a Ranger admin, per side:
#   <SIDE>_RANGER_URL      Ranger Admin's URL, e.g. https://ranger.example.com:6182 (required)
#   <SIDE>_RANGER_SERVICE  the Ranger service of type kafka (default: the one the profile names, in the JSON)
#   <SIDE>_RANGER_NETRC    a netrc file holding the admin's user and password (curl --netrc-file); unset: Kerberos
#                          (SPNEGO, curl --negotiate) with the ticket in the caller's credential cache
#   RANGER_CURL_OPTIONS    extra curl options, e.g. "--cacert /path/ca.pem" (split on blanks)
set -euo pipefail
CURL="${CURL:-curl}"

urlencode() {  # one path segment, byte by byte
  local LC_ALL=C text="$1" out="" char i
  for ((i = 0; i < ${#text}; i++)); do
    char="${text:i:1}"
    case "$char" in
      [A-Za-z0-9._~-]) out+="$char" ;;
      *) printf -v char '%%%02X' "'$char"; out+="$char" ;;
    esac
  done
  printf '%s' "$out"
}

merge_policy() {  # merge_policy <url> <service> <netrc or empty> <policy name> <policy JSON without its service>
  local url="$1" service="$2" netrc="$3" name="$4" body auth
  body="{\"service\":\"$service\",${5#\{}"
  if [ -n "$netrc" ]; then auth=(--netrc-file "$netrc"); else auth=(--negotiate -u :); fi
  # shellcheck disable=SC2086
  "$CURL" -sS "${auth[@]}" ${RANGER_CURL_OPTIONS:-} -H 'Accept: application/json' --fail -o /dev/null -X POST \
    -H 'Content-Type: application/json' --data-binary "$body" "$url/service/public/v2/api/policy/apply"
  echo "applied: $name"
}

apply_policy() {  # apply_policy <url> <service> <netrc or empty> <policy name> <policy JSON without its service>
  local url="$1" service="$2" netrc="$3" name="$4" body auth code
  body="{\"service\":\"$service\",${5#\{}"
  if [ -n "$netrc" ]; then auth=(--netrc-file "$netrc"); else auth=(--negotiate -u :); fi
  # shellcheck disable=SC2086
  local call=("$CURL" -sS "${auth[@]}" ${RANGER_CURL_OPTIONS:-} -H 'Accept: application/json')
  local by_name="$url/service/public/v2/api/service/$(urlencode "$service")/policy/$(urlencode "$name")"
  code="$("${call[@]}" -o /dev/null -w '%{http_code}' "$by_name")"
  case "$code" in
    200) "${call[@]}" --fail -o /dev/null -X PUT -H 'Content-Type: application/json' --data-binary "$body" "$by_name"
         echo "replaced: $name" ;;
    404) "${call[@]}" --fail -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary "$body" \
           "$url/service/public/v2/api/policy"
         echo "created: $name" ;;
    *) echo "Ranger Admin answered HTTP $code for the policy $name; nothing changed for it" >&2; return 1 ;;
  esac
}

# ---- source cluster src: 5 policies of the mirror secure-mirror-src-tgt
: "${SOURCE_RANGER_URL:?set it to the URL of Ranger Admin for the source cluster}"
SOURCE_RANGER_SERVICE="${SOURCE_RANGER_SERVICE:-kafka}"
[[ "$SOURCE_RANGER_SERVICE" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "SOURCE_RANGER_SERVICE: a Ranger service name is letters, digits, '_', '.' and '-'" >&2; exit 2; }
apply_policy "$SOURCE_RANGER_URL" "$SOURCE_RANGER_SERVICE" "${SOURCE_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt source topic orders*' \
  '{"name":"secure-mirror-src-tgt source topic orders*","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (source cluster src): mirror may consume, describe, describe_configs on every topic whose name starts with orders.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["orders*"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"consume","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"describe_configs","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$SOURCE_RANGER_URL" "$SOURCE_RANGER_SERVICE" "${SOURCE_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt source topic payments' \
  '{"name":"secure-mirror-src-tgt source topic payments","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (source cluster src): mirror may consume, describe, describe_configs on the topic payments only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["payments"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"consume","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"describe_configs","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$SOURCE_RANGER_URL" "$SOURCE_RANGER_SERVICE" "${SOURCE_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt source consumergroup secure-mirror-src-tgt-*' \
  '{"name":"secure-mirror-src-tgt source consumergroup secure-mirror-src-tgt-*","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (source cluster src): mirror may consume on every consumer group whose name starts with secure-mirror-src-tgt-.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"consumergroup":{"values":["secure-mirror-src-tgt-*"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"consume","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$SOURCE_RANGER_URL" "$SOURCE_RANGER_SERVICE" "${SOURCE_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt source consumergroup app.*' \
  '{"name":"secure-mirror-src-tgt source consumergroup app.*","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (source cluster src): mirror may describe on every consumer group whose name starts with app..","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"consumergroup":{"values":["app.*"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"describe","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$SOURCE_RANGER_URL" "$SOURCE_RANGER_SERVICE" "${SOURCE_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt source consumergroup billing' \
  '{"name":"secure-mirror-src-tgt source consumergroup billing","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (source cluster src): mirror may describe on the consumer group billing only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"consumergroup":{"values":["billing"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"describe","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'

# ---- target cluster tgt: 9 policies of the mirror secure-mirror-src-tgt
: "${TARGET_RANGER_URL:?set it to the URL of Ranger Admin for the target cluster}"
TARGET_RANGER_SERVICE="${TARGET_RANGER_SERVICE:-cl1_kafka}"
[[ "$TARGET_RANGER_SERVICE" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "TARGET_RANGER_SERVICE: a Ranger service name is letters, digits, '_', '.' and '-'" >&2; exit 2; }
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target topic src.orders*' \
  '{"name":"secure-mirror-src-tgt target topic src.orders*","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may publish, describe, create, consume, alter_configs, configure on every topic whose name starts with src.orders.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["src.orders*"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"publish","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"create","isAllowed":true},{"type":"consume","isAllowed":true},{"type":"alter_configs","isAllowed":true},{"type":"configure","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target topic src.payments' \
  '{"name":"secure-mirror-src-tgt target topic src.payments","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may publish, describe, create, consume, alter_configs, configure on the topic src.payments only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["src.payments"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"publish","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"create","isAllowed":true},{"type":"consume","isAllowed":true},{"type":"alter_configs","isAllowed":true},{"type":"configure","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target consumergroup secure-mirror-src-tgt-*' \
  '{"name":"secure-mirror-src-tgt target consumergroup secure-mirror-src-tgt-*","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may consume on every consumer group whose name starts with secure-mirror-src-tgt-.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"consumergroup":{"values":["secure-mirror-src-tgt-*"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"consume","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target consumergroup app.*' \
  '{"name":"secure-mirror-src-tgt target consumergroup app.*","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may consume, describe on every consumer group whose name starts with app..","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"consumergroup":{"values":["app.*"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"consume","isAllowed":true},{"type":"describe","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target consumergroup billing' \
  '{"name":"secure-mirror-src-tgt target consumergroup billing","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may consume, describe on the consumer group billing only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"consumergroup":{"values":["billing"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"consume","isAllowed":true},{"type":"describe","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target topic secure_mirror.offset-map.src.internal' \
  '{"name":"secure-mirror-src-tgt target topic secure_mirror.offset-map.src.internal","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may create, describe, publish, consume on the topic secure_mirror.offset-map.src.internal only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["secure_mirror.offset-map.src.internal"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"create","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"publish","isAllowed":true},{"type":"consume","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target topic src.checkpoints.internal' \
  '{"name":"secure-mirror-src-tgt target topic src.checkpoints.internal","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may create, describe, publish, consume on the topic src.checkpoints.internal only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["src.checkpoints.internal"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"create","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"publish","isAllowed":true},{"type":"consume","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target topic heartbeats' \
  '{"name":"secure-mirror-src-tgt target topic heartbeats","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may publish, describe, create, consume on the topic heartbeats only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"topic":{"values":["heartbeats"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"publish","isAllowed":true},{"type":"describe","isAllowed":true},{"type":"create","isAllowed":true},{"type":"consume","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
apply_policy "$TARGET_RANGER_URL" "$TARGET_RANGER_SERVICE" "${TARGET_RANGER_NETRC:-}" \
  'secure-mirror-src-tgt target cluster kafka-cluster' \
  '{"name":"secure-mirror-src-tgt target cluster kafka-cluster","description":"Rendered by secure-mirror for the mirror secure-mirror-src-tgt (target cluster tgt): mirror may idempotent_write on the cluster kafka-cluster only.","policyLabels":["secure-mirror","secure-mirror-src-tgt"],"isEnabled":true,"isAuditEnabled":true,"resources":{"cluster":{"values":["kafka-cluster"],"isExcludes":false,"isRecursive":false}},"policyItems":[{"accesses":[{"type":"idempotent_write","isAllowed":true}],"users":["mirror"],"groups":[],"roles":[],"conditions":[],"delegateAdmin":false}],"denyPolicyItems":[],"allowExceptions":[],"denyExceptions":[]}'
