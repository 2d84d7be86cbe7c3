/**
 * The peer of `tool-audit ingest` in bench/ingest/ingest.ts: ClickHouse's own Kafka table engine with
 * materialized views, in embedded ClickHouse (chDB) on its own data directory (one process per
 * data directory). It creates the same segment tables as tool-audit (its migrations), a Kafka
 * table over the benchmark topic and views that parse the envelope into tool_invocations,
 * tool_outputs + output_contents, and broken messages into quarantine. It validates nothing and
 * de-duplicates nothing: every message becomes one row.
 *
 * Protocol (stdout, one JSON object per line): {"event":"ready",migrationsApplied} just before the views are
 * attached (consumption starts with them), {"event":"progress",rows} now and then, and
 * {"event":"done",rows,…} once the tables hold `expect` rows more than `base`. It then waits for SIGTERM (or
 * stdin closing), detaches the Kafka table and exits.
 *
 *   node --import tsx bench/ingest/ingest-kafka-engine.ts '<json options>'
 */
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';

interface Options {
  dataDir: string;
  database: string;
  brokers: string;
  topic: string;
  group: string;
  expect: number;
  /** Rows the tables held before (a preloaded database): not counted as consumed. */
  base?: number;
  timeoutMs: number;
  consumers: number;
  threadPerConsumer: boolean;
  flushMs: number;
  maxBlockSize: number;
  pollMs: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as Options;
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: opts.database, dataDir: opts.dataDir });
// On a preloaded copy every migration is applied already; how many were applied is reported.
const migrated = await migrate(createClickHouseDoor(ch, opts.database), { retentionDays: { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 } });
const db = opts.database;
const run = (query: string) => ch.command({ query });
// The key tables of migration 012 serve tool-audit's look-ups only: the engine, which looks
// nothing up, does not pay for them (the comparison is the stricter for it).
for (const view of ['call_keys_mv', 'output_keys_mv', 'quarantine_keys_mv']) await run(`DROP VIEW IF EXISTS ${db}.${view}`);

const INVOCATION = `call_id String, task_id Nullable(String), tool_id String, agent_id String, orchestrator String,
  instance_id Nullable(String), args String, args_hash String, status String, duration_ms Int64, result_summary String,
  error Nullable(String), cost_usd Nullable(Float64), tokens_used Nullable(String), created_at String`;
const OUTPUT = `output_id String, call_id String, tool_id String, content_type String, content_hash String, size_bytes Int64,
  sample Nullable(String), created_at String`;
const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

// The envelope is parsed once, by the format (nested objects and arrays kept as JSON text).
await run(`CREATE TABLE ${db}.packets_kafka
  (type String, call_id String, invocation Tuple(${INVOCATION}), output Tuple(${OUTPUT}), content String)
  ENGINE = Kafka
  SETTINGS kafka_broker_list = ${q(opts.brokers)}, kafka_topic_list = ${q(opts.topic)}, kafka_group_name = ${q(opts.group)},
    kafka_format = 'JSONEachRow', kafka_handle_error_mode = 'stream',
    kafka_num_consumers = ${opts.consumers}, kafka_thread_per_consumer = ${opts.threadPerConsumer ? 1 : 0},
    kafka_flush_interval_ms = ${opts.flushMs}, kafka_max_block_size = ${opts.maxBlockSize},
    input_format_json_read_objects_as_strings = 1, input_format_json_read_arrays_as_strings = 1,
    input_format_skip_unknown_fields = 1`);

const enumOr = (expr: string, values: string[], fallback: string) => `if(${expr} IN (${values.map(q).join(', ')}), ${expr}, ${q(fallback)})`;
const ORCH = ['websocket', 'kernel', 'gateway', 'scheduler'];
const STATUS = ['success', 'timeout', 'error', 'rate_limited', 'invalid_input'];
const CTYPES = ['json', 'csv', 'text', 'image_id', 'chart_id', 'code', 'html'];
const SOURCE = `concat('kafka:', _topic, '/', toString(_partition), '@', toString(_offset))`;
const views = [
  `CREATE MATERIALIZED VIEW ${db}.mv_invocations TO ${db}.tool_invocations AS
   SELECT toUUIDOrZero(invocation.call_id) AS call_id, ifNull(invocation.task_id, '') AS task_id,
     invocation.tool_id AS tool_id, invocation.agent_id AS agent_id,
     ${enumOr('invocation.orchestrator', ORCH, 'gateway')} AS orchestrator,
     ifNull(invocation.instance_id, invocation.orchestrator) AS instance_id,
     invocation.args AS args,
     ${enumOr('invocation.status', STATUS, 'error')} AS status, toUInt64(greatest(invocation.duration_ms, 0)) AS duration_ms,
     invocation.result_summary AS result_summary, invocation.error AS error, invocation.cost_usd AS cost_usd,
     invocation.tokens_used AS tokens_used, parseDateTime64BestEffortOrZero(invocation.created_at, 3, 'UTC') AS created_at,
     '' AS fingerprint, ${SOURCE} AS source
   FROM ${db}.packets_kafka WHERE length(_error) = 0 AND type = 'tool_call'`,
  `CREATE MATERIALIZED VIEW ${db}.mv_outputs TO ${db}.tool_outputs AS
   SELECT toUUIDOrZero(output.output_id) AS output_id, toUUIDOrZero(output.call_id) AS call_id, output.tool_id AS tool_id,
     ${enumOr('output.content_type', CTYPES, 'text')} AS content_type, substring(output.content_hash, 1, 64) AS content_hash,
     toUInt64(greatest(output.size_bytes, 0)) AS size_bytes, output.sample AS sample,
     parseDateTime64BestEffortOrZero(output.created_at, 3, 'UTC') AS created_at, '' AS fingerprint, ${SOURCE} AS source
   FROM ${db}.packets_kafka WHERE length(_error) = 0 AND type = 'output_artifact'`,
  `CREATE MATERIALIZED VIEW ${db}.mv_contents TO ${db}.output_contents AS
   SELECT substring(output.content_hash, 1, 64) AS content_hash, ${enumOr('output.content_type', CTYPES, 'text')} AS content_type,
     content, toUInt64(greatest(output.size_bytes, 0)) AS size_bytes,
     parseDateTime64BestEffortOrZero(output.created_at, 3, 'UTC') AS last_seen
   FROM ${db}.packets_kafka WHERE length(_error) = 0 AND type = 'output_artifact'`,
  `CREATE MATERIALIZED VIEW ${db}.mv_broken TO ${db}.quarantine AS
   SELECT ${SOURCE} AS source_key, 'kafka' AS source_kind, _topic AS topic, toInt32(_partition) AS partition,
     toInt64(_offset) AS offset, '' AS request_id, '' AS packet_type, 'malformed_json' AS reason_code, _error AS reason,
     CAST([] AS Array(String)) AS ids, _raw_message AS raw
   FROM ${db}.packets_kafka WHERE length(_error) > 0`,
];

async function rows(): Promise<{ invocations: number; outputs: number; quarantine: number; total: number }> {
  const rs = await ch.query({
    query: `SELECT (SELECT count() FROM ${db}.tool_invocations) AS invocations, (SELECT count() FROM ${db}.tool_outputs) AS outputs,
                   (SELECT count() FROM ${db}.quarantine) AS quarantine`,
    format: 'JSONEachRow',
  });
  const [r] = await rs.json<{ invocations: string; outputs: string; quarantine: string }>();
  const c = { invocations: Number(r?.invocations), outputs: Number(r?.outputs), quarantine: Number(r?.quarantine) };
  return { ...c, total: c.invocations + c.outputs + c.quarantine - (opts.base ?? 0) };
}

let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await run(`DETACH TABLE ${db}.packets_kafka`).catch(() => undefined);
  await ch.close().catch(() => undefined);
  process.exit(code);
};
process.on('SIGTERM', () => void stop(0));
process.stdin.on('end', () => void stop(0));
process.stdin.resume();

say({ event: 'ready', migrationsApplied: migrated.applied.length });
for (const v of views) await run(v);
const deadline = Date.now() + opts.timeoutMs;
let lastReport = 0;
for (;;) {
  const r = await rows();
  if (r.total >= opts.expect) {
    say({ event: 'done', ...r });
    break;
  }
  if (Date.now() - lastReport > 5000) {
    lastReport = Date.now();
    say({ event: 'progress', ...r });
  }
  if (Date.now() > deadline) {
    say({ event: 'timeout', ...r });
    break;
  }
  await sleep(opts.pollMs);
}
// Stays up (holding its data directory) until the parent has read what it needs.
