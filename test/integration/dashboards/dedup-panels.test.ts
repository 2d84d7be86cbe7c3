/**
 * The Potential savings, Dedup candidates and Repeated calls over time panels read the dedup index
 * (the calls the indexer copied plus every call of a key ingested after its watermark) instead of
 * grouping or ranking every call of the range. Their totals, page of groups (names included) and
 * series are pinned to the statements the panels ran before, kept here as the oracles, over the
 * whole workload and a range that starts and ends inside an hour and a minute: with no index yet,
 * with the index up to date, and with calls ingested after the watermark. Identical output contents
 * chooses its page by counting first; its rows are pinned to the one-pass statement the same way.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { refreshDedupIndex } from '../../../analyzers/dedup-index.ts';
import { buildDashboards, type DashboardFile } from '../../../dashboards/index.ts';
import { expandPanelSql } from '../../../dashboards/grafana-expand.ts';
import { panelSql } from '../../../dashboards/panel-sql.ts';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { bucketOf, CREATED_IN_WINDOW } from '../../../queries/dashboard-common.ts';
import { IDENTICAL_OUTPUT_CONTENTS } from '../../../queries/dashboard-dedup.ts';
import { DEDUP_CANDIDATES } from '../../../queries/dedup-candidates.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { generateWorkload, loadWorkload, type Workload } from './workload.ts';

type Totals = { total_groups: number; total_duplicate_calls: number; total_savings_ms: number; total_savings_usd: number };

let ch: ClickHouseClient;
let db: string;
let w: Workload;
let panel: string;
let table: string;
let repeats: string;

/** The raw SQL of a panel of the dedup dashboard. */
function panelTarget(title: string): string {
  const dedup = buildDashboards({ database: db }).find((f) => f.file === 'dedup.json') as DashboardFile;
  const p = (dedup.dashboard.panels ?? []).find((x) => (x as { title?: string }).title === title) as unknown as { targets: Array<{ rawSql: string }> };
  return p.targets[0]?.rawSql ?? '';
}

beforeAll(async () => {
  ({ ch, db } = await freshDatabase('dedup_panels'));
  w = generateWorkload({ seed: 11 });
  await loadWorkload(ch, db, w);
  panel = panelTarget('Potential savings');
  table = panelTarget('Dedup candidates');
  repeats = panelTarget('Repeated calls over time');
}, 180_000);

// The oracles: the panels' statements before they read the index — two passes over the calls,
// and every call of the range ranked among the calls of its tool and args.
const twoPass = () => panelSql(DEDUP_CANDIDATES, { database: db }, { limit: 1 });
const REPEATS_SCAN = {
  name: 'repeats_over_time_scan',
  sql: `SELECT ${bucketOf('created_at')} AS time, count() AS repeated_calls, sum(ifNull(cost_usd, 0)) AS repeated_cost_usd
FROM (
  SELECT created_at, cost_usd, row_number() OVER (PARTITION BY tool_id, args ORDER BY created_at, call_id) AS nth
  FROM {db:Identifier}.tool_invocations
  WHERE ${CREATED_IN_WINDOW}
)
WHERE nth > 1
GROUP BY time
ORDER BY time`,
};
const CONTENTS_SCAN = {
  name: 'identical_output_contents_scan',
  sql: `SELECT
  content_hash,
  toString(tool_id) AS tool_id,
  count() AS n,
  arrayStringConcat(arraySlice(arrayMap(x -> toString(x.2), arraySort(groupArray((created_at, call_id)))), 1, 10), ', ') AS first_call_ids,
  any(size_bytes) AS bytes,
  (count() - 1) * bytes AS repeated_bytes,
  any(content_type) AS content_type,
  any(sample) AS sample
FROM {db:Identifier}.tool_outputs
WHERE ${CREATED_IN_WINDOW}
GROUP BY tool_id, content_hash
HAVING n >= {min_count:UInt32}
ORDER BY n DESC, content_hash, tool_id
LIMIT {limit:UInt32}`,
};

async function totals(sql: string, fromMs: number, toMs: number): Promise<Totals> {
  const [r] = await rows<Totals>(ch, expandPanelSql(sql, { fromMs, toMs, variables: { min_count: '2' } }));
  return { total_groups: Number(r?.total_groups ?? 0), total_duplicate_calls: Number(r?.total_duplicate_calls ?? 0), total_savings_ms: Number(r?.total_savings_ms ?? 0), total_savings_usd: Number(r?.total_savings_usd ?? 0) };
}

async function expectSameTotals(when: string): Promise<void> {
  for (const [fromMs, toMs] of [
    [w.fromMs, w.toMs],
    [w.fromMs + 7 * 60_000 + 13_000, w.toMs - 11 * 60_000 - 7_000],
  ] as const) {
    const want = await totals(twoPass(), fromMs, toMs);
    const got = await totals(panel, fromMs, toMs);
    expect(got.total_groups, `${when}: groups`).toBe(want.total_groups);
    expect(got.total_duplicate_calls, `${when}: repeated calls`).toBe(want.total_duplicate_calls);
    expect(got.total_savings_ms, `${when}: time saved`).toBe(want.total_savings_ms);
    expect(got.total_savings_usd, `${when}: cost saved`).toBeCloseTo(want.total_savings_usd, 9);
    // The candidates table: the same page of groups, names included, in the same order.
    const page = (sql: string) => rows<Record<string, unknown>>(ch, expandPanelSql(sql, { fromMs, toMs, variables: { min_count: '2' } }));
    const strip = (r: Record<string, unknown>[]) => r.map(({ total_savings_usd, potential_savings_usd, ...rest }) => ({ ...rest, usd: Math.round(Number(potential_savings_usd) * 1e9), total: Math.round(Number(total_savings_usd) * 1e9) }));
    expect(strip(await page(table)), `${when}: candidates`).toEqual(strip(await page(panelSql(DEDUP_CANDIDATES, { database: db }, { limit: 100 }))));
    // Repeats over time, bucketed by the panel interval of the range.
    const series = (r: Record<string, unknown>[]) => r.map((x) => [String(x.time), Number(x.repeated_calls), Math.round(Number(x.repeated_cost_usd) * 1e9)]);
    const wantSeries = series(await page(panelSql(REPEATS_SCAN, { database: db })));
    expect(wantSeries.length, `${when}: repeats`).toBeGreaterThan(0);
    expect(series(await page(repeats)), `${when}: repeats over time`).toEqual(wantSeries);
    // Identical output contents: the same groups with the same details, including a page cut
    // short (limit 3) where ties of count are ordered by hash.
    for (const limit of [100, 3]) {
      const want = await page(panelSql(CONTENTS_SCAN, { database: db }, { limit }));
      expect(want.length, `${when}: identical contents`).toBeGreaterThan(0);
      expect(await page(panelSql(IDENTICAL_OUTPUT_CONTENTS, { database: db }, { limit })), `${when}: identical contents, limit ${limit}`).toEqual(want);
    }
  }
}

describe('the dedup panels on the dedup index', () => {
  it('give the totals and groups the two-pass statement gives: before any index, indexed, and with calls after the watermark', async () => {
    expect(panel).toContain('dedup_repeats');
    expect((await totals(twoPass(), w.fromMs, w.toMs)).total_groups, 'the workload has repeated calls').toBeGreaterThan(0);
    await expectSameTotals('no index yet');
    const door = createClickHouseDoor(ch, db);
    const run = await refreshDedupIndex(door, 0);
    expect(run.copied, 'the indexer copied the repeated calls').toBeGreaterThan(0);
    await expectSameTotals('index up to date');
    // Calls ingested after the watermark repeat keys already indexed and keys never seen.
    await loadWorkload(ch, db, generateWorkload({ seed: 11, tasks: 4 }));
    await expectSameTotals('calls after the watermark');
  });
});
