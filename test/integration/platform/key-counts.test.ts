/**
 * The args_key prefix counts of migrations 036/037 (key_counts), which the dedup indexer's large
 * runs take their candidate keys from: for every prefix, the count is never below the number of
 * stored calls with that prefix (counted here by scanning tool_invocations itself), whether the
 * calls came before the view existed (037's backfill), while the migration ran, or after it; and
 * it is exact when no insert raced the migration.
 */
import { describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../../platform/clickhouse/client.ts';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';
import { insertCalls, insertWhile, rawCall, rng, type RawCall } from '../../helpers/raw-calls.ts';

const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };
const MIGRATIONS = ['036_key_counts.sql', '037_key_counts_backfill.sql'];
const TOOLS = ['search_web', 'fetch_url', 'sql_query'];
const now = Date.now();

/** n calls, about a third of their (tool, args) repeated, over the last 60 days (three months). */
function generate(seed: number, n: number): RawCall[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => rawCall({ tool_id: TOOLS[Math.floor(r() * TOOLS.length)] as string, args: { q: Math.floor(r() * n * 1.5), seed: r() < 0.5 ? seed : 0 }, t: now - Math.floor(r() * 60 * 86_400_000) }));
}

/** Back to before 036: no view, no table; calls inserted now are counted by nothing. */
async function unmigrate036(ch: ClickHouseClient, db: string): Promise<void> {
  await ch.command({ query: 'DROP VIEW {db:Identifier}.key_counts_mv', query_params: { db } });
  await ch.command({ query: 'DROP TABLE {db:Identifier}.key_counts', query_params: { db } });
  await ch.command({ query: "DELETE FROM {db:Identifier}.schema_migrations WHERE name LIKE '036_%' OR name LIKE '037_%'", query_params: { db } });
}

/** Per prefix: calls stored (a scan of the calls) and the count key_counts holds, with the newest month of each. */
async function compare(ch: ClickHouseClient, db: string) {
  const scan = await rows<{ k: string; c: string; m: string }>(
    ch,
    'SELECT toString(toUInt32(bitShiftRight(args_key, 32))) AS k, toString(count()) AS c, toString(max(toStartOfMonth(created_at))) AS m FROM {db:Identifier}.tool_invocations GROUP BY k',
    { db },
  );
  const kept = new Map(
    (await rows<{ k: string; n: string; m: string }>(ch, 'SELECT toString(k) AS k, toString(sum(n)) AS n, toString(max(last_month)) AS m FROM {db:Identifier}.key_counts GROUP BY k', { db })).map((x) => [x.k, x]),
  );
  return { scan, kept, short: scan.filter((s) => Number(kept.get(s.k)?.n ?? 0) < Number(s.c) || (kept.get(s.k)?.m ?? '') < s.m) };
}

describe('key_counts (migrations 036/037)', () => {
  it('counts calls stored before the view existed and after it, exactly, and keeps every prefix past its newest call', async () => {
    const { ch, db, door } = await freshDatabase('kc');
    await unmigrate036(ch, db);
    const before = generate(1, 3000);
    for (let i = 0; i < before.length; i += 700) await insertCalls(ch, db, before.slice(i, i + 700));
    expect((await migrate(door, { retentionDays: RETENTION })).applied).toEqual(MIGRATIONS);
    const after = generate(2, 2000);
    // Repeats of calls stored before: their counts add to the backfilled ones.
    const repeats = before.slice(0, 400).map((c) => rawCall({ tool_id: c.tool_id, args: c.args, t: now - 3_600_000 }));
    for (const batch of [after.slice(0, 900), after.slice(900), repeats]) await insertCalls(ch, db, batch);
    const { scan, kept, short } = await compare(ch, db);
    expect(scan.reduce((s, x) => s + Number(x.c), 0)).toBe(5400);
    expect(short).toEqual([]);
    // Exact: no insert raced the migration, so nothing was counted twice.
    for (const s of scan) expect(Number(kept.get(s.k)?.n), s.k).toBe(Number(s.c));
    expect(kept.size).toBe(scan.length);
    // Merged, the counts read the same.
    await ch.command({ query: 'OPTIMIZE TABLE {db:Identifier}.key_counts FINAL', query_params: { db } });
    const merged = await rows<{ n: string }>(ch, 'SELECT toString(count()) AS n FROM {db:Identifier}.key_counts', { db });
    expect(Number(merged[0]?.n)).toBe(scan.length);
    const repeated = await rows<{ c: string }>(ch, 'SELECT toString(count()) AS c FROM {db:Identifier}.key_counts FINAL WHERE n >= 2', { db });
    expect(Number(repeated[0]?.c)).toBe(scan.filter((s) => Number(s.c) >= 2).length);
    expect(Number(repeated[0]?.c)).toBeGreaterThan(400);
  }, 120_000);

  it('never counts a call short when calls are inserted while the migration runs', async () => {
    const { ch, db, door } = await freshDatabase('kcr');
    await unmigrate036(ch, db);
    await insertCalls(ch, db, generate(3, 1500));
    const during = generate(4, 3000);
    const { result, batchesBefore } = await insertWhile(ch, db, during, 100, () => migrate(door, { retentionDays: RETENTION }));
    expect(result.applied).toEqual(MIGRATIONS);
    expect(batchesBefore).toBeGreaterThan(0);
    expect(batchesBefore).toBeLessThan(100);
    const { scan, short } = await compare(ch, db);
    expect(scan.reduce((s, x) => s + Number(x.c), 0)).toBe(4500);
    expect(short).toEqual([]);
  }, 120_000);
});
