#!/usr/bin/env bash
# npm run bench:emit-python: the Python emitter's added time per wrapped call (p50/p99) with
# delivery in the background over HTTP to a tool-audit server started here (embedded ClickHouse,
# no Kafka, in a temporary data directory). Extra arguments go to emit-python/bench/bench_emit.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.services/venv
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv"; "$venv/bin/pip" install --quiet -e 'emit-python[test]'; }
port=${BENCH_PORT:-28481}
data=$(mktemp -d)
PORT=$port TOOL_AUDIT_DATA_DIR="$data" LOG_LEVEL=warn ANALYZER_ENABLED=false KAFKA_BROKERS= node bin/tool-audit.mjs serve >"$data/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.5; done
"$venv/bin/python" emit-python/bench/bench_emit.py --url "http://127.0.0.1:$port" "$@"
"$venv/bin/python" emit-python/bench/bench_emit.py "$@"
