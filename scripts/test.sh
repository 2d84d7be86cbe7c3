#!/usr/bin/env bash
# npm test: installs what the tests need, then lint, typecheck, unit and integration tests on
# real services (embedded ClickHouse; a Kafka broker assembled from Maven Central unless
# KAFKA_BROKERS points at one). Ends with one summary line "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Not `npm ci`: chdb lists native packages for other platforms that the registry does not
  # serve, so the lock file never has them and `npm ci` refuses; install honours the lock.
  echo "== installing npm dependencies" >&2
  npm install --no-audit --no-fund --no-save
fi

# The browser tests drive the machine's Chromium (Debian package); nothing downloads a browser.
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM_PATH:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium (apt-get)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >&2 || echo "!! apt-get could not install chromium: the browser tests will be skipped" >&2
  else
    echo "!! no chromium and no root apt-get: the browser tests (test/integration/web) will be skipped; install the Debian package chromium or set CHROMIUM_PATH" >&2
  fi
fi

echo "== web bundle" >&2
npx tsx web/build.ts >&2
echo "== lint" >&2
npx eslint .
echo "== typecheck" >&2
npm run --silent typecheck

started_kafka=""
if [ -z "${KAFKA_BROKERS:-}" ]; then
  echo "== starting Kafka (scripts/kafka-services.sh)" >&2
  line=$(bash scripts/kafka-services.sh start)
  export "${line?}"
  started_kafka=1
fi
cleanup() { [ -n "$started_kafka" ] && bash scripts/kafka-services.sh stop >&2 || true; }
trap cleanup EXIT

mkdir -p .services
report=.services/vitest-report.json
rm -f "$report"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?

if [ -f "$report" ]; then
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
  ' "$report"
else
  echo "tests: 0 passed, 1 failed"
fi
exit $status
