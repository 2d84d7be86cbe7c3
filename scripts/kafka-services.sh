#!/usr/bin/env bash
# Single-node Apache Kafka broker (KRaft combined mode) on 127.0.0.1 for
# development and tests, assembled from Maven Central with the machine's Maven.
#
# Usage:
#   scripts/kafka-services.sh start [--keep-data]   install if needed, start, wait until ready,
#                                                   print "KAFKA_BROKERS=127.0.0.1:<port>" on stdout
#   scripts/kafka-services.sh stop                  SIGTERM, wait up to 20 s, then SIGKILL
#   scripts/kafka-services.sh status                exit 0 if running and accepting connections, 3 otherwise
#   scripts/kafka-services.sh install               only fetch the jars into .services/kafka/<version>/libs
#
# Environment:
#   TOOL_AUDIT_KAFKA_PORT             client (PLAINTEXT) port, default 19092
#   TOOL_AUDIT_KAFKA_CONTROLLER_PORT  KRaft controller port, default client port + 1
#   TOOL_AUDIT_KAFKA_HEAP             JVM heap options, default "-Xms256m -Xmx768m"
#   TOOL_AUDIT_KAFKA_READY_TIMEOUT    seconds to wait for readiness, default 60
#   TOOL_AUDIT_SERVICES_DIR           where this broker keeps data, config, logs, pid and lock,
#                                     default <repo>/.services/kafka. Brokers with different dirs
#                                     (and ports) run side by side; the jars are always shared
#                                     from <repo>/.services/kafka/<version>.
#
# Everything it writes in the repo lives under .services/ (jars, config, data, logs, pid).
# Only stdout output is the KAFKA_BROKERS line of `start` (and the status line); logs go to stderr.

set -euo pipefail

# Pinned: newest Kafka that resolves cleanly from Maven Central and was verified with kafkajs@2.2.4
# (produce acks=-1, consumer groups, offset commit/fetch, admin) -- 4.0.2, 4.1.2, 4.3.1 and 3.9.2 all
# passed. 4.4.0 is not usable: its kafka_2.13 pom needs org.apache.kafka:kafka-tools-api:4.4.0, which
# is missing from Maven Central. Override with TOOL_AUDIT_KAFKA_VERSION for experiments only.
KAFKA_VERSION="${TOOL_AUDIT_KAFKA_VERSION:-4.3.1}"
SCALA_BINARY="2.13"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
INSTALL_DIR="$REPO_ROOT/.services/kafka"
VERSION_DIR="$INSTALL_DIR/$KAFKA_VERSION"
LIBS_DIR="$VERSION_DIR/libs"
TOOLS_DIR="$VERSION_DIR/tools"
BASE_DIR="${TOOL_AUDIT_SERVICES_DIR:-$INSTALL_DIR}"
DATA_DIR="$BASE_DIR/data"
LOG_DIR="$BASE_DIR/logs"
CONF_DIR="$BASE_DIR/config"
PID_FILE="$BASE_DIR/pid"
LOCK_FILE="$BASE_DIR/.lock"
INSTALL_LOCK_FILE="$INSTALL_DIR/.install.lock"

PORT="${TOOL_AUDIT_KAFKA_PORT:-19092}"
CONTROLLER_PORT="${TOOL_AUDIT_KAFKA_CONTROLLER_PORT:-$((PORT + 1))}"
HEAP_OPTS="${TOOL_AUDIT_KAFKA_HEAP:--Xms256m -Xmx768m}"
READY_TIMEOUT="${TOOL_AUDIT_KAFKA_READY_TIMEOUT:-60}"
HOST="127.0.0.1"

KAFKA_MAJOR="${KAFKA_VERSION%%.*}"

log() { printf '[kafka-services] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# pid of our broker if it is alive (and really is a kafka.Kafka JVM), else empty
running_pid() {
  [[ -f "$PID_FILE" ]] || return 0
  local pid
  pid="$(tr -dc '0-9' <"$PID_FILE")"
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'; then
    echo "$pid"
  fi
}

# Install (jars, readiness probe) and config (server.properties, storage): kafka-setup.sh.
# shellcheck source=kafka-setup.sh
source "$SCRIPT_DIR/kafka-setup.sh"

# ---------------------------------------------------------------------------------------------
# readiness
# ---------------------------------------------------------------------------------------------
wait_ready() {
  local pid="$1" deadline=$((SECONDS + READY_TIMEOUT))
  while ! port_open "$PORT"; do
    kill -0 "$pid" 2>/dev/null || { tail -n 40 "$LOG_DIR/server.log" "$LOG_DIR/kafka.out" >&2 2>/dev/null; die "broker exited during startup"; }
    ((SECONDS < deadline)) || die "port $PORT not open after ${READY_TIMEOUT}s (see $LOG_DIR)"
    sleep 0.3
  done
  local remaining=$((deadline - SECONDS))
  ((remaining < 5)) && remaining=5
  if [[ -f "$TOOLS_DIR/KafkaReadyCheck.class" ]]; then
    # shellcheck disable=SC2046
    if ! java -Xmx128m -XX:TieredStopAtLevel=1 $(logging_opts ready-check) \
        -cp "$TOOLS_DIR:$LIBS_DIR/*" KafkaReadyCheck "$HOST:$PORT" "$remaining" >&2; then
      kill -0 "$pid" 2>/dev/null || die "broker exited during startup (see $LOG_DIR)"
      die "broker on port $PORT not ready after ${READY_TIMEOUT}s (see $LOG_DIR)"
    fi
  else
    while ! grep -q 'Kafka Server started' "$LOG_DIR/server.log" 2>/dev/null; do
      kill -0 "$pid" 2>/dev/null || die "broker exited during startup"
      ((SECONDS < deadline)) || die "broker not started after ${READY_TIMEOUT}s (see $LOG_DIR)"
      sleep 0.3
    done
  fi
}

# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------
cmd_start() {
  local keep_data=0 arg
  for arg in "$@"; do
    case "$arg" in
      --keep-data) keep_data=1 ;;
      *) die "unknown option for start: $arg" ;;
    esac
  done
  mkdir -p "$BASE_DIR"
  exec 9>"$LOCK_FILE"
  flock -w 600 9 || die "could not lock $LOCK_FILE"

  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    if ! port_open "$PORT"; then
      log "broker pid $pid is alive but port $PORT is not open yet; waiting"
    fi
    wait_ready "$pid"
    log "already running (pid $pid)"
    echo "KAFKA_BROKERS=$HOST:$PORT"
    return 0
  fi
  rm -f "$PID_FILE"
  port_open "$PORT" && die "port $PORT is already in use by another process (set TOOL_AUDIT_KAFKA_PORT)"
  port_open "$CONTROLLER_PORT" && die "controller port $CONTROLLER_PORT is already in use (set TOOL_AUDIT_KAFKA_CONTROLLER_PORT)"

  local t0=$SECONDS
  install_kafka
  write_config
  if [[ $keep_data -eq 1 && -f "$DATA_DIR/meta.properties" ]]; then
    log "keeping existing data in $DATA_DIR"
  else
    rm -rf "$DATA_DIR"
    mkdir -p "$DATA_DIR"
    format_storage
  fi
  : >"$LOG_DIR/kafka.out"
  rm -f "$LOG_DIR/server.log" "$LOG_DIR/ready-check.log"

  log "starting Kafka $KAFKA_VERSION on $HOST:$PORT (controller $HOST:$CONTROLLER_PORT)"
  # shellcheck disable=SC2086,SC2046
  nohup setsid java $HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    $(logging_opts server) -cp "$LIBS_DIR/*" kafka.Kafka "$CONF_DIR/server.properties" \
    </dev/null >>"$LOG_DIR/kafka.out" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_ready "$pid"
  log "ready after $((SECONDS - t0)) s (pid $pid, logs in $LOG_DIR)"
  echo "KAFKA_BROKERS=$HOST:$PORT"
}

cmd_stop() {
  mkdir -p "$BASE_DIR"
  local pid
  pid="$(running_pid)"
  if [[ -z "$pid" ]]; then
    log "not running"
    rm -f "$PID_FILE"
    return 0
  fi
  log "stopping pid $pid (SIGTERM)"
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "still alive after 20 s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "$PID_FILE"
  log "stopped"
}

cmd_status() {
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]] && port_open "$PORT"; then
    echo "running pid=$pid version=$KAFKA_VERSION brokers=$HOST:$PORT"
    return 0
  elif [[ -n "$pid" ]]; then
    echo "starting pid=$pid version=$KAFKA_VERSION brokers=$HOST:$PORT (port not open yet)"
    return 3
  fi
  echo "stopped version=$KAFKA_VERSION"
  return 3
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  install) mkdir -p "$BASE_DIR"; install_kafka ;;
  *)
    echo "usage: $0 {start [--keep-data]|stop|status|install}" >&2
    exit 2
    ;;
esac
