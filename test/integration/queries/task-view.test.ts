/**
 * The task view's two ways on real ClickHouse: task_rows (one range read, page cut in
 * JavaScript) and the segments (page of calls, then dependencies and outputs) must give the same
 * answer for every task, window, limit and cursor, and the answer the packets imply: outputs
 * stamped with their task at ingest or not (orphans), rows stored twice in task_rows, an analyzer
 * row beside an emitted one, a task too large for the fast path, and a database upgraded to
 * migration 007 with rows already in it.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { byTask } from '../../../queries/by-task.ts';
import { OrphanCallIds, orphanLoader } from '../../../queries/orphan-call-ids.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { freshDatabase, rows, doorOf } from '../../helpers/clickhouse.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

const ALL = { fromMs: 0, toMs: Date.UTC(2200, 0, 1) };
const BASE = Date.UTC(2026, 10, 20, 8, 0, 0);
const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };
type Packet = Record<string, unknown>;

const writerFor = (ch: ClickHouseClient, db: string) =>
  createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 1000, metrics: new MetricsRegistry(), logger: silentLogger() });

async function write(w: ReturnType<typeof writerFor>, packets: Packet[]): Promise<void> {
  const outcomes = await w.write(packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http' as const, requestId: randomUUID(), index } })));
  expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
}

/** A task of n calls 20 s apart (two share a millisecond: the call_id decides), its dependencies and outputs. */
function task(name: string, n: number, withOutput: (i: number) => boolean) {
  const calls = Array.from({ length: n }, (_, i) =>
    toolCall({ created_at: new Date(BASE + Math.max(0, i - 1) * 20_000 + (i <= 1 ? 1 : i % 7)).toISOString(), args: { name, i }, tool_id: ['search_web', 'fetch_url', 'python_execute'][i % 3] }, name),
  );
  const deps = calls.slice(1).map((c, i) =>
    dependency({
      task_id: name,
      preceding_call_id: (calls[i] as ReturnType<typeof toolCall>).call_id,
      succeeding_call_id: c.call_id,
      time_delta_ms: 20_000,
      preceding_tool_id: (calls[i] as ReturnType<typeof toolCall>).invocation.tool_id,
      succeeding_tool_id: c.invocation.tool_id,
    }),
  );
  const outputs = calls.filter((_, i) => withOutput(i)).map((c, i) => outputArtifact(c.call_id, `${name} output ${i}`, 'text', { tool_id: c.invocation.tool_id, created_at: new Date(BASE + i * 20_000 + 500).toISOString() }));
  return { name, calls, deps, outputs };
}

/** Both ways of the view, page by page: they must agree; returns the pages. */
async function walk(ch: ClickHouseClient, db: string, taskId: string, limit: number, window = ALL) {
  const pages = [];
  let cursor: string | undefined;
  do {
    const p = { taskId, window, limit, ...(cursor === undefined ? {} : { cursor }) };
    const fast = await byTask(doorOf(ch, db), db, p, DEFAULT_QUERY_CONTEXT);
    const segments = await byTask(doorOf(ch, db), db, p, DEFAULT_QUERY_CONTEXT, { rowsCap: 0 });
    expect(fast).toEqual(segments);
    pages.push(fast);
    cursor = fast.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

const callIds = (t: ReturnType<typeof task>) => t.calls.map((c) => c.call_id);
const outputIds = (t: ReturnType<typeof task>) => t.outputs.map((o) => o.output.output_id).sort();

describe('task view: task_rows and segments agree', () => {
  let ch: ClickHouseClient;
  let db: string;
  const stamped = task(`stamped-${randomUUID()}`, 12, (i) => i % 3 !== 2);
  const orphans = task(`orphans-${randomUUID()}`, 6, () => true);
  const later = task(`later-${randomUUID()}`, 8, () => true);
  const tasklessCall = toolCall({ args: { taskless: true } }, null);
  const taskless = outputArtifact(tasklessCall.call_id, 'output of a call without a task');
  // Two agent runs of the stamped task: the outer one names it, on every page, both ways.
  const run = (name: string, startMs: number, durationMs: number) => ({
    type: 'agent_run',
    run: { run_id: randomUUID(), task_id: stamped.name, agent_id: `agent of ${name}`, name, duration_ms: durationMs, status: 'success', error: null, trace_id: null, span_id: null, parent_span_id: null, created_at: new Date(startMs + durationMs).toISOString() },
  });
  const runs = [run('inner', BASE + 5_000, 60_000), run('outer', BASE, 300_000)];

  beforeAll(async () => {
    ({ ch, db } = await freshDatabase('taskview'));
    const w1 = writerFor(ch, db);
    // stamped: calls and outputs in one round. orphans: the outputs reach a writer before their
    // calls. later: calls first; half the outputs through the same writer later (it remembers the
    // calls), half through a writer that never saw them.
    await write(w1, [...stamped.calls, ...stamped.outputs, ...stamped.deps, tasklessCall, taskless, ...runs]);
    await write(writerFor(ch, db), orphans.outputs);
    await write(w1, [...orphans.calls, ...orphans.deps, ...later.calls, ...later.deps]);
    await write(w1, later.outputs.slice(0, 4));
    await write(writerFor(ch, db), later.outputs.slice(4));
  });

  it('stamps an output with its task when the writer knows the call, else null, and lists those as orphans', async () => {
    const got = await rows<{ id: string; task_id: string | null }>(ch, 'SELECT toString(output_id) AS id, task_id FROM {db:Identifier}.tool_outputs', { db });
    const taskOf = new Map(got.map((r) => [r.id, r.task_id]));
    for (const o of stamped.outputs) expect(taskOf.get(o.output.output_id)).toBe(stamped.name);
    for (const o of orphans.outputs) expect(taskOf.get(o.output.output_id)).toBeNull();
    later.outputs.forEach((o, i) => expect(taskOf.get(o.output.output_id)).toBe(i < 4 ? later.name : null));
    expect(taskOf.get(taskless.output.output_id)).toBe('');
    const listed = await rows<{ id: string }>(ch, 'SELECT toString(output_id) AS id FROM {db:Identifier}.orphan_outputs', { db });
    expect(listed.map((r) => r.id).sort()).toEqual([...orphans.outputs, ...later.outputs.slice(4)].map((o) => o.output.output_id).sort());
  });

  it('answers what the packets imply, stamped or orphan outputs alike, in every page size', async () => {
    for (const t of [stamped, orphans, later]) {
      for (const limit of [1, 5, 100]) {
        const pages = await walk(ch, db, t.name, limit);
        const order = [...t.calls].sort((a, b) => a.invocation.created_at.localeCompare(b.invocation.created_at) || 0);
        expect(pages.flatMap((p) => p.invocations.map((i) => i.call_id)).sort()).toEqual(callIds(t).sort());
        expect(pages.flatMap((p) => p.invocations.map((i) => i.created_at))).toEqual(order.map((c) => c.invocation.created_at));
        expect(pages.flatMap((p) => p.outputs.map((o) => o.output_id)).sort()).toEqual(outputIds(t));
        const pairs = new Set(pages.flatMap((p) => p.dependencies.map((d) => `${d.preceding_call_id}>${d.succeeding_call_id}`)));
        expect([...pairs].sort()).toEqual(t.deps.map((d) => `${d.dependency.preceding_call_id}>${d.dependency.succeeding_call_id}`).sort());
        const named = t === stamped ? ['outer', 'agent of outer', [runs[1]?.run.run_id, runs[0]?.run.run_id]] : [null, null, []];
        for (const p of pages) expect([p.name, p.agent_id, p.agent_runs.map((r) => r.run_id)]).toEqual(named);
      }
    }
    expect((await walk(ch, db, 'no-such-task', 10))[0]?.invocations).toEqual([]);
  });

  it('finds an orphan from the in-memory snapshot and one ingested after it from the tail', async () => {
    const t = task(`snap-${randomUUID()}`, 4, () => true);
    await write(writerFor(ch, db), t.outputs.slice(0, 2));
    await write(writerFor(ch, db), t.calls);
    // No margin: the snapshot (taken now) alone must know the first two; the tail, the rest.
    const orphans = new OrphanCallIds(orphanLoader(doorOf(ch, db), db, DEFAULT_QUERY_CONTEXT), { refreshMs: 3_600_000, marginMs: 0 });
    const view = (o: OrphanCallIds) => byTask(doorOf(ch, db), db, { taskId: t.name, window: ALL, limit: 10 }, DEFAULT_QUERY_CONTEXT, { orphans: o });
    expect((await view(orphans)).outputs.map((o) => o.output_id).sort()).toEqual(t.outputs.slice(0, 2).map((o) => o.output.output_id).sort());
    expect(t.outputs.slice(0, 2).every((o) => orphans.has(o.output.call_id))).toBe(true);
    await write(writerFor(ch, db), t.outputs.slice(2));
    expect(t.outputs.slice(2).some((o) => orphans.has(o.output.call_id))).toBe(false);
    expect((await view(orphans)).outputs.map((o) => o.output_id).sort()).toEqual(outputIds(t));
  });

  it('cuts the same window as the segment statements (half-open, by created_at)', async () => {
    const at = (i: number) => Date.parse(stamped.calls[i]?.invocation.created_at as string);
    const pages = await walk(ch, db, stamped.name, 3, { fromMs: at(3), toMs: at(9) });
    expect(pages.flatMap((p) => p.invocations.map((i) => i.call_id))).toEqual(stamped.calls.slice(3, 9).map((c) => c.call_id));
  });

  it('keeps one row per id when task_rows holds a row twice, and an emitted dependency over the analyzer copy', async () => {
    await ch.command({ query: 'INSERT INTO {db:Identifier}.task_rows SELECT * FROM {db:Identifier}.task_rows WHERE task_id = {t:String}', query_params: { db, t: stamped.name } });
    const d = stamped.deps[0]?.dependency as Record<string, unknown>;
    await ch.insert({
      table: `${db}.tool_workflows`,
      values: [{ ...d, origin: 'analyzer', time_delta_ms: 20_001, fingerprint: 'analyzer'.padEnd(32, '0'), source: 'analyzer' }],
      format: 'JSONEachRow',
    });
    const [view] = await walk(ch, db, stamped.name, 100);
    expect(view?.invocations).toHaveLength(12);
    expect(view?.dependencies.filter((x) => x.preceding_call_id === d.preceding_call_id && x.succeeding_call_id === d.succeeding_call_id)).toEqual([
      expect.objectContaining({ origin: 'emitted', time_delta_ms: 20_000 }),
    ]);
  });

  it('pages a task larger than the fast path from the segments', async () => {
    const big = task(`big-${randomUUID()}`, 1600, (i) => i % 40 === 0);
    await write(writerFor(ch, db), [...big.calls, ...big.deps, ...big.outputs]);
    const stored = await rows<{ n: string }>(
      ch,
      `SELECT (SELECT count() FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String}) + (SELECT count() FROM {db:Identifier}.tool_workflows WHERE task_id = {t:String})
            + (SELECT count() FROM {db:Identifier}.task_rows WHERE task_id = {t:String} AND kind = 'output') AS n`,
      { db, t: big.name },
    );
    expect(Number(stored[0]?.n)).toBeGreaterThan(3000);
    const pages = await walk(ch, db, big.name, 700);
    expect(pages).toHaveLength(3);
    expect(pages.flatMap((p) => p.invocations.map((i) => i.call_id)).sort()).toEqual(callIds(big).sort());
    expect(pages.flatMap((p) => p.outputs.map((o) => o.output_id)).sort()).toEqual(outputIds(big));
  });
});

describe('migration 007 on a database that already holds rows', () => {
  it('copies existing calls and dependencies into task_rows; old outputs are found by call_id', async () => {
    const { ch, db } = await freshDatabase('upgrade');
    // The database as before 007: no views feeding task_rows, no record of the migration.
    for (const v of ['task_rows_calls', 'task_rows_dependencies', 'task_rows_outputs', 'orphan_outputs_mv']) {
      await ch.command({ query: 'DROP VIEW IF EXISTS {db:Identifier}.{v:Identifier}', query_params: { db, v } });
    }
    for (const t of ['task_rows', 'orphan_outputs']) await ch.command({ query: 'TRUNCATE TABLE {db:Identifier}.{t:Identifier}', query_params: { db, t } });
    await ch.command({ query: "DELETE FROM {db:Identifier}.schema_migrations WHERE name = '007_task_rows.sql'", query_params: { db } });
    const t = task(`old-${randomUUID()}`, 9, (i) => i % 2 === 0);
    // Outputs through a fresh writer before their calls: stored with task_id '', as every output
    // written before 007 is.
    const lonely = outputArtifact(randomUUID(), 'an output whose call never came');
    await write(writerFor(ch, db), [...t.outputs, lonely]);
    await write(writerFor(ch, db), [...t.calls, ...t.deps]);
    expect(await rows(ch, 'SELECT 1 FROM {db:Identifier}.task_rows UNION ALL SELECT 1 FROM {db:Identifier}.orphan_outputs', { db })).toEqual([]);

    const r = await migrate(doorOf(ch, db), { retentionDays: RETENTION });
    expect(r.applied).toEqual(['007_task_rows.sql']);
    const pages = await walk(ch, db, t.name, 4);
    expect(pages.flatMap((p) => p.invocations.map((i) => i.call_id)).sort()).toEqual(callIds(t).sort());
    expect(pages.flatMap((p) => p.outputs.map((o) => o.output_id)).sort()).toEqual(outputIds(t));
    expect(pages.flatMap((p) => p.dependencies)).toHaveLength(t.deps.length + 2);
    // Old outputs whose call is stored were joined into task_rows; the one without a call is an orphan.
    const outs = await rows<{ n: string }>(ch, "SELECT count() AS n FROM {db:Identifier}.task_rows WHERE kind = 'output'", { db });
    expect(Number(outs[0]?.n)).toBe(t.outputs.length);
    const orphanRows = await rows<{ id: string }>(ch, 'SELECT toString(output_id) AS id FROM {db:Identifier}.orphan_outputs', { db });
    expect(orphanRows.map((r) => r.id)).toEqual([lonely.output.output_id]);
  });
});

describe('migration 020 on a database whose task_rows holds calls and dependencies', () => {
  it('deletes them, stops the views that wrote them, and the task view answers the same', async () => {
    const { ch, db } = await freshDatabase('m020');
    const t = task(`m020-${randomUUID()}`, 7, (i) => i % 2 === 0);
    await write(writerFor(ch, db), [...t.calls, ...t.outputs, ...t.deps]);
    const before = await walk(ch, db, t.name, 3);
    // As before 020: the calls and dependencies copied into task_rows as 007's views did, but
    // stale (another status, another delta), so reading them would change the answer; and the
    // migration not recorded.
    await ch.command({
      query: `INSERT INTO {db:Identifier}.task_rows (task_id, kind, ts, id, row)
              SELECT task_id, 'call', created_at, call_id,
                     formatRow('JSONEachRow', call_id, task_id, tool_id, agent_id, orchestrator, instance_id, args, args_hash, 'timeout' AS status,
                               duration_ms, result_summary, error, cost_usd, tokens_used, toUnixTimestamp64Milli(created_at) AS created_ms)
              FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String}`,
      query_params: { db, t: t.name },
    });
    await ch.command({
      query: `INSERT INTO {db:Identifier}.task_rows (task_id, kind, ts, id, row)
              SELECT task_id, 'dependency', ingested_at, succeeding_call_id,
                     formatRow('JSONEachRow', task_id, preceding_call_id, succeeding_call_id, preceding_tool_id, succeeding_tool_id,
                               time_delta_ms + 1 AS time_delta_ms, data_flow, origin)
              FROM {db:Identifier}.tool_workflows WHERE task_id = {t:String}`,
      query_params: { db, t: t.name },
    });
    await ch.command({ query: "DELETE FROM {db:Identifier}.schema_migrations WHERE name = '020_task_rows_outputs_only.sql'", query_params: { db } });
    const kinds = async () => (await rows<{ kind: string }>(ch, 'SELECT DISTINCT toString(kind) AS kind FROM {db:Identifier}.task_rows ORDER BY kind', { db })).map((r) => r.kind);
    expect(await kinds()).toEqual(['call', 'dependency', 'output']);

    expect((await migrate(doorOf(ch, db), { retentionDays: RETENTION })).applied).toEqual(['020_task_rows_outputs_only.sql']);
    // The task view reads calls and dependencies from their segments, whether or not the delete
    // has run yet (the 007 test above has them in task_rows for good).
    expect(await walk(ch, db, t.name, 3)).toEqual(before);
    for (let i = 0; i < 100 && (await kinds()).length > 1; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await kinds()).toEqual(['output']);
    const views = await rows<{ name: string }>(ch, "SELECT name FROM system.tables WHERE database = {db:String} AND name LIKE 'task_rows%' ORDER BY name", { db });
    expect(views.map((v) => v.name)).toEqual(['task_rows', 'task_rows_outputs']);
    // New calls and dependencies no longer land in task_rows.
    const u = task(`m020-after-${randomUUID()}`, 3, () => true);
    await write(writerFor(ch, db), [...u.calls, ...u.outputs, ...u.deps]);
    expect(await kinds()).toEqual(['output']);
    expect((await walk(ch, db, u.name, 10))[0]?.invocations.map((i) => i.call_id).sort()).toEqual(callIds(u).sort());
  });
});
