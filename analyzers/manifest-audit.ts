/**
 * The auditor's manifest part: M1–M7 and M9 on calls ingested in (watermark, to], `to` being the
 * auditor's bound (grace passed, analyzer done). It has a watermark of its own that does not
 * move while no manifest is loaded, so the first manifest audits every call already stored.
 * Thin I/O around the pure rules of manifest-rules.ts.
 */
import { forEachSliced, mapSliced, setSliced } from '../platform/cooperative.ts';
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';
import type { Violation } from './audit-rules.ts';
import { approvalRule, callRules, needsApproval, rateLimitRule, retryRule, trifectaRule, ValidatorCache, type AuditCall } from './manifest-rules.ts';
import type { ManifestHistory } from './manifest-versions.ts';
import { readWatermark, writeWatermark } from './store.ts';

/** Watermark name of the manifest rules. */
export const MANIFEST_AUDIT_JOB = 'auditor-manifest';
/**
 * Calls judged per step; a first manifest over months of calls is audited in steps of this size.
 * 50 k: the step's calls are held in one array, and each step's statements stay short.
 */
const SLICE_ROWS = 50_000;
const TASK_CHUNK = 500;

const COLUMNS = `toString(call_id) AS call_id, task_id, tool_id, toUnixTimestamp64Milli(created_at) AS t, toString(status) AS status,
  duration_ms, cost_usd, toString(args_key) AS args_key, if(tool_id IN {schema_tools:Array(String)}, args, '') AS args,
  if(tool_id IN {approval_tools:Array(String)}, approval, '') AS approval`;
const SLICE = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;

type Row = Omit<AuditCall, 't' | 'duration_ms' | 'cost_usd'> & { t: string | number; duration_ms: string | number; cost_usd: number | null };
const toCall = (r: Row): AuditCall => ({ ...r, t: Number(r.t), duration_ms: Number(r.duration_ms), cost_usd: r.cost_usd === null ? null : Number(r.cost_usd) });

/** What a pass did. */
export interface ManifestAuditResult {
  from: number;
  to: number;
  calls: number;
  found: Violation[];
}

/** The manifest rules' state across cycles: compiled validators. */
export class ManifestAuditor {
  private readonly validators = new ValidatorCache();

  constructor(
    private readonly ch: ClickHouseDoor,
    private readonly windowMs: number,
  ) {}

  /**
   * Audits up to `to` in steps, recording through `record` before each step's watermark moves
   * (a crash repeats at most one step; violation keys make the repeat add nothing).
   */
  async run(history: ManifestHistory, to: number, record: (found: Violation[]) => Promise<number>): Promise<{ calls: number; found: number; recorded: number }> {
    const total = { calls: 0, found: 0, recorded: 0 };
    if (!history.loaded) return total;
    for (;;) {
      const from = await readWatermark(this.ch, MANIFEST_AUDIT_JOB);
      if (to <= from) return total;
      const step = await this.stepEnd(from, to);
      const r = await this.audit(history, from, step);
      total.calls += r.calls;
      total.found += r.found.length;
      total.recorded += await record(r.found);
      await writeWatermark(this.ch, MANIFEST_AUDIT_JOB, step);
      if (step >= to) return total;
    }
  }

  /** The end of the next step: `to`, or earlier when more than SLICE_ROWS calls wait. */
  private async stepEnd(from: number, to: number): Promise<number> {
    const [r] = await this.ch.select<{ ms: string }>(
      `SELECT toUnixTimestamp64Milli(ingested_at) AS ms FROM {db:Identifier}.tool_invocations WHERE ${SLICE}
       ORDER BY ingested_at LIMIT 1 OFFSET {n:UInt64}`,
      { from, to, n: SLICE_ROWS },
    );
    return r ? Number(r.ms) : to;
  }

  /** Every manifest rule on the calls ingested in (from, to]. */
  async audit(history: ManifestHistory, from: number, to: number): Promise<ManifestAuditResult> {
    const schemaTools = history.toolsWhere((e) => e.input_schema !== null);
    const approvalTools = history.toolsWhere(needsApproval);
    const slice = await mapSliced(await this.ch.select<Row>(`SELECT ${COLUMNS} FROM {db:Identifier}.tool_invocations WHERE ${SLICE}`, { from, to, schema_tools: schemaTools, approval_tools: approvalTools }), toCall);
    // A slice at a time (M2 validates args against JSON Schemas), the event loop served between.
    const found: Violation[] = [];
    await forEachSliced(slice, (c) => found.push(...callRules([c], history, this.validators)));
    found.push(...(await this.rateLimits(slice, history)));
    found.push(...approvalRule(slice, history));
    const tasks = [...(await setSliced(slice, (c) => c.task_id))].filter((t) => t !== '');
    for (let i = 0; i < tasks.length; i += TASK_CHUNK) {
      const chunk = tasks.slice(i, i + TASK_CHUNK);
      const calls = await mapSliced(await this.ch.select<Row>(`SELECT ${COLUMNS} FROM {db:Identifier}.tool_invocations WHERE task_id IN {tasks:KeySet(String)}`, { schema_tools: [], approval_tools: [], tasks: chunk }), toCall);
      const byTask = new Map<string, AuditCall[]>();
      await forEachSliced(calls, (c) => {
        const list = byTask.get(c.task_id);
        if (list) list.push(c);
        else byTask.set(c.task_id, [c]);
      });
      await forEachSliced(byTask, ([task, list]) => found.push(...retryRule(list, history, this.windowMs), ...trifectaRule(task, list, history)), 200);
    }
    return { from, to, calls: slice.length, found };
  }

  /**
   * M4 around the slice: a new call can push over the limit any call of its tool in the next
   * minute, so the calls judged are those of the slice's (tool, minute) and the minute after,
   * counted against every call of the tool from the minute before.
   */
  private async rateLimits(slice: readonly AuditCall[], history: ManifestHistory): Promise<Violation[]> {
    const limited = new Set(history.toolsWhere((e) => e.rate_limit_rpm !== null));
    const minutes = new Set<string>();
    for (const c of slice) if (limited.has(c.tool_id)) minutes.add(`${c.tool_id}\u0000${Math.floor(c.t / 60_000)}`);
    if (minutes.size === 0) return [];
    const judge = new Set<string>();
    const load: Array<[string, number]> = [];
    for (const key of minutes) {
      const [tool = '', m] = key.split('\u0000');
      const minute = Number(m);
      for (const d of [-1, 0, 1]) load.push([tool, minute + d]);
      judge.add(`${tool}\u0000${minute}`).add(`${tool}\u0000${minute + 1}`);
    }
    const tools = [...limited];
    const mm = load.map((x) => x[1]);
    const context = (
      await this.ch.select<Row>(
        `SELECT ${COLUMNS} FROM {db:Identifier}.tool_invocations
         WHERE tool_id IN {tools:Array(String)}
           AND created_at >= fromUnixTimestamp64Milli({lo:Int64}, 'UTC') AND created_at < fromUnixTimestamp64Milli({hi:Int64}, 'UTC')
           AND has(arrayZip({mt:Array(String)}, {mm:Array(Int64)}), (toString(tool_id), intDiv(toUnixTimestamp64Milli(created_at), 60000)))`,
        { tools, lo: mm.reduce((a, b) => Math.min(a, b)) * 60_000, hi: (mm.reduce((a, b) => Math.max(a, b)) + 1) * 60_000, mt: load.map((x) => x[0]), mm, schema_tools: [], approval_tools: [] },
      )
    ).map(toCall);
    const judged = context.filter((c) => judge.has(`${c.tool_id}\u0000${Math.floor(c.t / 60_000)}`));
    return rateLimitRule(judged, context, history);
  }
}
