#!/bin/bash
# Creates the tool-audit ClickHouse users (users.sql.template beside this file) with passwords
# from the environment. The clickhouse-server image runs it once, on an empty data directory,
# as CLICKHOUSE_USER (the admin, with access management).
(
  set -euo pipefail
  dir=$(dirname "${BASH_SOURCE[0]}")
  CLICKHOUSE_DB=${CLICKHOUSE_DB:-tool_audit}
  sql=$(cat "$dir/users.sql.template")
  for var in CLICKHOUSE_DB CLICKHOUSE_INGEST_PASSWORD CLICKHOUSE_ANALYZER_PASSWORD CLICKHOUSE_API_PASSWORD CLICKHOUSE_READER_PASSWORD; do
    value=${!var:-}
    if [ -z "$value" ]; then echo "01-users.sh: $var is not set" >&2; exit 1; fi
    case "$value" in *"'"* | *\\*) echo "01-users.sh: $var must not contain ' or \\" >&2; exit 1 ;; esac
    sql=${sql//"\${$var}"/$value}
  done
  if ! [[ $CLICKHOUSE_DB =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]; then echo "01-users.sh: CLICKHOUSE_DB must be a plain identifier" >&2; exit 1; fi
  clickhouse client --host 127.0.0.1 --user "${CLICKHOUSE_USER:-default}" --password "${CLICKHOUSE_PASSWORD:-}" --multiquery <<<"$sql"
  echo "01-users.sh: created tool_audit_ingest, tool_audit_analyzer, tool_audit_api, tool_audit_reader on ${CLICKHOUSE_DB}"
)
