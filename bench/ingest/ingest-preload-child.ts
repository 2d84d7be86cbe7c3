/**
 * Child process of the ingest benchmark's preload (bench/ingest/ingest-preload.ts). embedded ClickHouse
 * (chDB) holds one data directory per process, so the benchmark process never opens one itself:
 * building the preloaded database and counting rows happen here, and the directory is free again
 * once this process has exited.
 *
 *   node --import tsx bench/ingest/ingest-preload-child.ts build '<json {dataDir, database, shape, quarantine}>'
 *   node --import tsx bench/ingest/ingest-preload-child.ts count '<json {dataDir, database}>'
 *
 * Prints one JSON line (the counts) on stdout.
 */
import { createClickHouse, type ClickHouseClient } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { migrate } from '../../platform/clickhouse/migrate.ts';
import { removeReplacedParts } from '../../platform/clickhouse/part-cleanup.ts';
import { ensureBenchData, type BenchShape } from '../reads/queries-data.ts';

/** Rows of the tables the ingest benchmark verifies. */
export interface RowCounts {
  invocations: number;
  invocationsUnique: number;
  outputs: number;
  outputsUnique: number;
  quarantine: number;
  workflows: number;
}

// Same retention as the ingest child's defaults (platform/config.ts), so its migrate() changes nothing.
const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };
const log = (s: string) => process.stderr.write(`[preload] ${s}\n`);

// Rejected packets as `tool-audit ingest` quarantines them: 80 % I1 reuses, 10 % schema, 10 % I5;
// raw is the packet's JSON (~550 bytes), received_at spread over the last 30 days.
const QUARANTINE_SQL = `
INSERT INTO {db:Identifier}.quarantine
  (source_key, source_kind, topic, partition, offset, request_id, packet_type, reason_code, reason, ids, raw, raw_encoding, received_at)
WITH
  number AS n,
  sipHash64('q', n) AS h,
  multiIf(h % 10 < 8, 'I1_call_id_reused', h % 10 < 9, 'schema', 'I5_args_hash') AS code,
  toString(reinterpretAsUUID(sipHash128('qcall', n))) AS cid,
  toInt32(h % 6) AS p,
  toInt64(intDiv(n, 6)) AS off,
  toDateTime64({end:DateTime64(3, 'UTC')}, 3, 'UTC') - toIntervalMillisecond(sipHash64('qt', n) % (30 * 86400000)) AS ts,
  ['search_web', 'fetch_url', 'python_execute', 'create_chart', 'summarize'][1 + intDiv(h, 10) % 5] AS tool,
  concat('{"type":"tool_call","call_id":"', cid, '","invocation":{"call_id":"', cid, '","task_id":"task-q', toString(intDiv(n, 8)),
         '",', if(code = 'schema', '', concat('"tool_id":"', tool, '",')),
         '"agent_id":"Researcher","orchestrator":"gateway","instance_id":"gateway-', toString(h % 4 + 1),
         '","args":{"query":"quarterly revenue 2026 ', toString(n % 500), '","top_k":10,"lang":"en","safe":true},"args_hash":"',
         lower(hex(SHA256(toString(n)))), '","status":"success","duration_ms":', toString(100 + h % 5000),
         ',"result_summary":{"result_count":', toString(h % 20), ',"urls_returned":', toString(h % 20),
         '},"error":null,"cost_usd":0.005,"tokens_used":null,"created_at":"', formatDateTime(ts, '%Y-%m-%dT%H:%i:%S.000Z'), '"}}') AS raw
SELECT concat('kafka:tool-audit.packets/', toString(p), '@', toString(off)), 'kafka', 'tool-audit.packets', p, off, '', 'tool_call', code,
  multiIf(code = 'I1_call_id_reused', concat('a different packet with this call_id (', cid, ') already exists (I1)'),
          code = 'schema', 'schema violation (I2): invocation.tool_id: Required',
          concat('args_hash ', lower(hex(SHA256(toString(n)))), ' does not match SHA-256 of canonical args (I5, SPEC §2)')),
  [cid], raw, 'utf8', ts
FROM numbers({start:UInt64}, {count:UInt64})`;

async function build(ch: ClickHouseClient, db: string, shape: BenchShape, quarantine: number): Promise<void> {
  if (shape.invocations > 0) await ensureBenchData(ch, db, shape, log);
  else await migrate(createClickHouseDoor(ch, db), { retentionDays: RETENTION });
  if (quarantine > 0) {
    const t0 = Date.now();
    // The range ends at the start of today (UTC), like the calls: within retention for weeks.
    const end = new Date();
    end.setUTCHours(0, 0, 0, 0);
    const params = { db, end: end.toISOString().replace('T', ' ').replace('Z', '') };
    for (let start = 0; start < quarantine; start += 1_000_000) {
      await ch.command({ query: QUARANTINE_SQL, query_params: { ...params, start, count: Math.min(1_000_000, quarantine - start) } });
    }
    log(`  quarantine: ${quarantine} rows in ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  await mergeAll(ch, db);
}

/**
 * Every table with more than one part in a partition merged, the key tables and other views'
 * targets included, as a long-running database's would be: left unmerged, their merges ran during
 * the measured phase (4.9 CPU s, a 30 M run at 0.89 instead of 0.96).
 */
async function mergeAll(ch: ClickHouseClient, db: string): Promise<void> {
  const rs = await ch.query({
    query: 'SELECT DISTINCT table FROM system.parts WHERE database = {db:String} AND active GROUP BY table, partition HAVING count() > 1',
    query_params: { db },
    format: 'JSONEachRow',
  });
  for (const { table } of await rs.json<{ table: string }>()) {
    const t0 = Date.now();
    await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.{table:Identifier} FINAL', query_params: { db, table } });
    log(`  merged ${table} in ${Math.round((Date.now() - t0) / 1000)} s`);
  }
}

async function count(ch: ClickHouseClient, db: string): Promise<RowCounts> {
  const rs = await ch.query({
    query: `SELECT (SELECT count() FROM {db:Identifier}.tool_invocations) AS invocations,
                   (SELECT uniqExact(call_id) FROM {db:Identifier}.tool_invocations) AS invocationsUnique,
                   (SELECT count() FROM {db:Identifier}.tool_outputs) AS outputs,
                   (SELECT uniqExact(output_id) FROM {db:Identifier}.tool_outputs) AS outputsUnique,
                   (SELECT count() FROM {db:Identifier}.quarantine) AS quarantine,
                   (SELECT count() FROM {db:Identifier}.tool_workflows) AS workflows`,
    query_params: { db },
    format: 'JSONEachRow',
  });
  const [r] = await rs.json<Record<keyof RowCounts, string>>();
  return Object.fromEntries(Object.entries(r ?? {}).map(([k, v]) => [k, Number(v)])) as unknown as RowCounts;
}

const [cmd, json] = process.argv.slice(2);
const o = JSON.parse(json ?? '{}') as { dataDir: string; database: string; shape?: BenchShape; quarantine?: number };
const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: o.database, dataDir: o.dataDir });
try {
  if (cmd === 'build') await build(ch, o.database, o.shape ?? { invocations: 0, tasks: 0, days: 30 }, o.quarantine ?? 0);
  else if (cmd !== 'count') throw new Error(`unknown command ${cmd}`);
  process.stdout.write(`${JSON.stringify(await count(ch, o.database))}\n`);
  // Parts merged away by OPTIMIZE would stay on disk after this process: not worth caching.
  const left = await removeReplacedParts(createClickHouseDoor(ch, o.database));
  if (left.outdatedParts) log(`  ${left.outdatedParts} replaced parts left after ${left.waitedMs} ms`);
} finally {
  await ch.close();
}
