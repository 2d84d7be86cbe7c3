/**
 * The CLI's read side and the demo workload: every demo packet passes the real pipeline; the
 * HTTP read client answers exactly what the query functions answer; `task` draws the tree from
 * the dependencies and `top` the per-tool table.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpReadQueries } from '../../../api/read-client.ts';
import { MAX_TIME_MS } from '../../../api/read-params.ts';
import { demoPackets } from '../../../cli/demo.ts';
import { renderTaskTree } from '../../../cli/task.ts';
import { renderTop } from '../../../cli/top.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries, type ReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { count, freshDatabase, doorOf } from '../../helpers/clickhouse.ts';
import { KEYS, READ_KEY } from '../../helpers/read-harness.ts';
import { readApp } from '../../helpers/read-app.ts';

let direct: ReadQueries;
let http: ReadQueries;
let close: () => Promise<void>;
let demo: ReturnType<typeof demoPackets>;
const ALL = { fromMs: 0, toMs: MAX_TIME_MS };

beforeAll(async () => {
  const { ch, db } = await freshDatabase('cli');
  demo = demoPackets({ tasks: 25, seed: 3, endMs: Date.now() - 60_000, hours: 6 });
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 100, metrics: new MetricsRegistry(), logger: silentLogger() });
  const outcomes = await writer.write(demo.packets.map((p, index) => ({ raw: JSON.stringify(p), source: { kind: 'http', requestId: 'demo', index } })));
  expect(outcomes.filter((o) => o.status !== 'accepted')).toEqual([]);
  expect(await count(ch, db, 'tool_invocations')).toBe(demo.calls);
  direct = createReadQueries(doorOf(ch, db), db, DEFAULT_QUERY_CONTEXT);
  const app = readApp({ door: doorOf(ch, db), db, keys: KEYS, queries: direct });
  await app.listen({ host: '127.0.0.1', port: 0 });
  http = createHttpReadQueries({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, apiKey: READ_KEY });
  close = () => app.close();
});
afterAll(async () => close?.());

describe('demo workload and CLI reads', () => {
  it('has what every read pattern needs: chains, failures, retries, duplicates, expensive calls, identical outputs', async () => {
    const window = ALL;
    expect((await direct.failed({ window, limit: 10 })).count).toBeGreaterThan(0);
    expect((await direct.dedup({ window, limit: 10, minCount: 2 })).groups.length).toBeGreaterThan(0);
    expect((await direct.expensive({ window, limit: 10, thresholdUsd: 1 })).count).toBeGreaterThan(0);
    expect((await direct.identicalOutputs({ window, limit: 10, minCount: 2 })).groups.length).toBeGreaterThan(0);
    const seq = await direct.sequences({ window, limit: 10, minCount: 2, length: 3 });
    expect(seq.sequences.map((s) => s.tools.join('>'))).toContain('fetch_url>python_execute>create_chart');
  });

  it('answers the same over HTTP as straight on ClickHouse', async () => {
    const window = ALL;
    const task = demo.tasks[4] as string;
    expect(await http.task({ taskId: task, window, limit: 100 })).toEqual(await direct.task({ taskId: task, window, limit: 100 }));
    expect(await http.tools({ window, limit: 100 })).toEqual(await direct.tools({ window, limit: 100 }));
    expect(await http.toolStats({ toolId: 'fetch_url', window, limit: 100 })).toEqual(await direct.toolStats({ toolId: 'fetch_url', window, limit: 100 }));
    expect(await http.dedup({ window, limit: 5, minCount: 2 })).toEqual(await direct.dedup({ window, limit: 5, minCount: 2 }));
    expect(await http.violations({ window, limit: 5, invariant: 'I8' })).toEqual(await direct.violations({ window, limit: 5, invariant: 'I8' }));
  });

  it('draws a task as a tree along its dependencies, in call order, with status, duration and cost', async () => {
    const view = await direct.task({ taskId: demo.tasks[0] as string, window: ALL, limit: 1000 });
    const text = renderTaskTree(view);
    const lines = text.split('\n');
    expect(lines[0]).toContain(`task ${demo.tasks[0]}: ${view.invocations.length} calls`);
    expect(lines).toHaveLength(view.invocations.length + 1);
    expect(lines[1]).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3} search_web/);
    // every emitted edge of the chain hangs the next call under the previous one
    expect(lines.slice(2).every((l) => /[└├]─ /.test(l))).toBe(true);
    for (const c of view.invocations) expect(text).toContain(c.created_at.slice(11, 23));
  });

  it('puts calls without a recorded predecessor at the root', () => {
    const inv = (id: string, at: string) =>
      ({ call_id: id, tool_id: `tool_${id}`, status: 'success', created_at: `2026-11-22T10:00:${at}.000Z`, duration_ms: 5, cost_usd: null, error: null }) as never;
    const dep = (a: string, b: string) => ({ task_id: 't', preceding_call_id: a, succeeding_call_id: b, preceding_tool_id: '', succeeding_tool_id: '', time_delta_ms: 1, data_flow: null, origin: 'emitted' as const });
    const text = renderTaskTree({ task_id: 't', invocations: [inv('a', '01'), inv('b', '02'), inv('c', '03'), inv('d', '04')], dependencies: [dep('a', 'b'), dep('a', 'd'), dep('b', 'd')], outputs: [] });
    expect(text.split('\n').slice(1).map((l) => l.replace(/\s+ok.*$/, ''))).toEqual([
      '10:00:01.000 tool_a',
      '└─ 10:00:02.000 tool_b',
      '   └─ 10:00:04.000 tool_d',
      '10:00:03.000 tool_c',
    ]);
  });

  it('prints the per-tool table with totals', async () => {
    const summary = await direct.tools({ window: ALL, limit: 100 });
    const text = renderTop(summary, ALL);
    expect(text.split('\n')[1]).toMatch(/^tool\s+calls\s+success\s+avg\s+p95\s+cost$/);
    expect(text).toMatch(new RegExp(`total\\s+${demo.calls}\\s`));
  });
});
