/**
 * The auditor: checks the SHOULD and cross-segment rules (I4, I8, I9, I10, I11), and the tool
 * manifest rules (M1–M7, manifest-audit.ts), on rows
 * ingested before now − grace (late packets get that long to arrive) and no later than the
 * dependency analyzer's watermark, and records each violation once in `violations`.
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Logger } from '../platform/logger.ts';
import type { MetricsRegistry } from '../platform/metrics.ts';
import { checkTaskPairs, violation, type Violation } from './audit-rules.ts';
import { DEPENDENCY_JOB } from './dependency-runner.ts';
import { ManifestAuditor } from './manifest-audit.ts';
import { periodic, type PeriodicJob } from './scheduler.ts';
import { callsOfTasks, pairsOfTasks, readWatermark, touchedTasks, writeWatermark } from './store.ts';

/** Dependencies of {@link createAuditor}. */
export interface AuditorDeps {
  clickhouse: ClickHouseDoor;
  windowMs: number;
  graceMs: number;
  metrics: MetricsRegistry;
  logger: Logger;
  /** Clock, for tests. */
  now?: () => number;
}

/** What one audit cycle did. */
export interface AuditResult {
  from: number;
  to: number;
  found: number;
  recorded: number;
}

const AUDITOR_JOB = 'auditor';
/** I11 compares with what the same stream sent shortly before the slice, too. */
const I11_LOOKBACK_MS = 3600_000;
const SLICE = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;

const CHECKS: Array<{ sql: string; toViolation: (r: Record<string, string>) => Violation }> = [
  {
    sql: `SELECT toString(call_id) AS id, toString(status) AS status, tool_id FROM {db:Identifier}.tool_invocations
          WHERE ${SLICE} AND status != 'success' AND error IS NULL`,
    toViolation: (r) => violation('I4', 'no-error', 'tool_call', [r.id ?? ''], `status ${r.status} of ${r.tool_id} has no error message`),
  },
  {
    sql: `SELECT toString(o.output_id) AS oid, toString(o.call_id) AS cid, toString(i.status) AS status
          FROM (SELECT output_id, call_id FROM {db:Identifier}.tool_outputs WHERE ${SLICE}) AS o
          LEFT JOIN (SELECT call_id, status FROM {db:Identifier}.tool_invocations
                     WHERE call_id IN (SELECT call_id FROM {db:Identifier}.tool_outputs WHERE ${SLICE})) AS i ON o.call_id = i.call_id
          WHERE i.call_id IS NULL OR i.status != 'success'
          SETTINGS join_use_nulls = 1`,
    toViolation: (r) =>
      r.status
        ? violation('I8', 'call-not-success', 'output_artifact', [r.oid ?? '', r.cid ?? ''], `output of call ${r.cid} whose status is ${r.status}, not success`)
        : violation('I8', 'no-call', 'output_artifact', [r.oid ?? '', r.cid ?? ''], `output references call ${r.cid}, which has no tool_call`),
  },
  {
    sql: `SELECT toString(call_id) AS cid, arrayStringConcat(arraySort(groupArray(toString(output_id))), ',') AS oids
          FROM {db:Identifier}.tool_outputs
          WHERE call_id IN (SELECT call_id FROM {db:Identifier}.tool_outputs WHERE ${SLICE})
          GROUP BY call_id HAVING count() > 1`,
    toViolation: (r) => violation('I8', 'several-outputs', 'output_artifact', [r.cid ?? '', ...(r.oids ?? '').split(',')], `call ${r.cid} has ${(r.oids ?? '').split(',').length} outputs; at most one is allowed`),
  },
  {
    sql: `WITH ws AS (SELECT task_id, preceding_call_id AS p, succeeding_call_id AS s FROM {db:Identifier}.tool_workflows WHERE ${SLICE})
          SELECT task_id, toString(p) AS p, toString(s) AS s,
                 p IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE call_id IN (SELECT p FROM ws)) AS has_p,
                 s IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE call_id IN (SELECT s FROM ws)) AS has_s
          FROM ws WHERE NOT has_p OR NOT has_s`,
    toViolation: (r) => {
      const missing = [Number(r.has_p) ? null : r.p, Number(r.has_s) ? null : r.s].filter(Boolean);
      return violation('I9', 'missing-call', 'tool_dependency', [r.p ?? '', r.s ?? ''], `dependency in task ${r.task_id} references missing tool_call ${missing.join(' and ')}`);
    },
  },
  {
    sql: `SELECT instance_id, id, toString(created_at) AS created_at, toString(prev_max) AS prev_max FROM (
            SELECT instance_id, toString(call_id) AS id, created_at, ingested_at,
                   max(created_at) OVER (PARTITION BY instance_id, replaceRegexpOne(source, '[@#][0-9]+$', '')
                                         ORDER BY toUInt64OrZero(extract(source, '[@#]([0-9]+)$'))
                                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max
            FROM {db:Identifier}.tool_invocations
            WHERE ingested_at > fromUnixTimestamp64Milli({lookback:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC'))
          WHERE created_at < prev_max AND ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')`,
    toViolation: (r) =>
      violation('I11', 'backwards', 'tool_call', [r.id ?? ''], `instance ${r.instance_id} sent created_at ${r.created_at} after ${r.prev_max}: time went backwards`),
  },
];

/** Creates the auditor job. */
export function createAuditor(deps: AuditorDeps): PeriodicJob<AuditResult> {
  const { clickhouse: ch, metrics } = deps;
  const now = deps.now ?? Date.now;
  const manifestAuditor = new ManifestAuditor(ch, deps.windowMs);

  async function record(found: Violation[]): Promise<number> {
    const unique = new Map(found.map((v) => [v.violation_key, v]));
    if (unique.size === 0) return 0;
    const existing = new Set<string>();
    const keys = [...unique.keys()];
    for (let i = 0; i < keys.length; i += 1000) {
      const rows = await ch.select<{ k: string }>('SELECT violation_key AS k FROM {db:Identifier}.violations WHERE violation_key IN {keys:Array(String)}', {
        keys: keys.slice(i, i + 1000),
      });
      for (const r of rows) existing.add(r.k);
    }
    const fresh = [...unique.values()].filter((v) => !existing.has(v.violation_key));
    await ch.insertRows('violations', fresh.map((v) => ({ key: v.violation_key, row: v })));
    for (const v of fresh) metrics.inc('tool_audit_violations_total', 'Violations recorded by the auditor', { invariant: v.invariant });
    return fresh.length;
  }

  async function runOnce(): Promise<AuditResult> {
    const from = await readWatermark(ch, AUDITOR_JOB);
    const analyzed = await readWatermark(ch, DEPENDENCY_JOB);
    // I10 needs the analyzer to have seen the slice; everything needs the grace period to pass.
    const to = Math.min(now() - deps.graceMs, analyzed);
    // The manifest rules keep a watermark of their own (a first manifest audits back to the start).
    const m = await manifestAuditor.run(to, record);
    if (to <= from) return { from, to: from, found: m.found, recorded: m.recorded };
    const params = { from, to, lookback: Math.max(0, from - I11_LOOKBACK_MS) };
    const found: Violation[] = [];
    for (const check of CHECKS) {
      for (const r of await ch.select<Record<string, string>>(check.sql, params)) found.push(check.toViolation(r));
    }
    const tasks = await touchedTasks(ch, from, to);
    for (let i = 0; i < tasks.length; i += 500) {
      const chunk = tasks.slice(i, i + 500);
      const calls = groupBy(await callsOfTasks(ch, chunk), (c) => c.task_id);
      const pairs = groupBy(await pairsOfTasks(ch, chunk), (p) => p.task_id);
      for (const task of chunk) found.push(...checkTaskPairs(task, calls.get(task) ?? [], pairs.get(task) ?? [], deps.windowMs));
    }
    const recorded = await record(found);
    await writeWatermark(ch, AUDITOR_JOB, to);
    return { from, to, found: found.length + m.found, recorded: recorded + m.recorded };
  }

  return periodic('auditor', runOnce, deps.logger);
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  }
  return out;
}
