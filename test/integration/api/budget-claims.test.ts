/**
 * Budget set versions across processes (migration 026): two budget services on two doors are two
 * processes, applying at once, their clocks on the same millisecond. The oracle: every apply gets a version of its own, at least the
 * server's time when it applied, and the set stored under it is exactly what that apply sent (read
 * back from budget_versions); the set in force afterwards is the one with the highest version.
 */
import { describe, expect, it } from 'vitest';
import { createBudgetService } from '../../../api/budgets/service.ts';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';

describe('budget set versions across processes', () => {
  it('gives each of concurrent applies from two processes its own version, its set stored whole', async () => {
    const { ch, db } = await freshDatabase('bc');
    // Both processes' clocks read the same millisecond: versions must not come from them.
    const clock = Date.now();
    const service = () => createBudgetService({ clickhouse: createClickHouseDoor(ch, db), logger: silentLogger(), ctx: DEFAULT_QUERY_CONTEXT, reservationTimeoutMs: 60_000, decisionsFlushMs: 20, now: () => clock });
    const a = service();
    const b = service();
    await Promise.all([a.start(), b.start()]);
    const started = Date.now();
    const sent = Array.from({ length: 6 }, (_, i) => ({ svc: i % 2 ? b : a, budgets: [{ budget_id: `set-${i}`, scope: { agent_id: `agent-${i}` }, period: 'day' as const, limit_usd: i + 1, mode: 'deny' as const }] }));
    const versions = await Promise.all(sent.map((s, i) => s.svc.apply(s.budgets, `key-${i}`)));
    expect(new Set(versions).size).toBe(sent.length);
    for (const v of versions) expect(v).toBeGreaterThanOrEqual(started - 1000);
    const stored = await rows<{ version: string; budgets: string; key_id: string }>(ch, 'SELECT toString(version) AS version, budgets, key_id FROM {db:Identifier}.budget_versions', { db });
    expect(stored).toHaveLength(sent.length);
    for (const [i, s] of sent.entries()) {
      const row = stored.find((r) => Number(r.version) === versions[i]);
      expect(JSON.parse(row?.budgets ?? 'null'), `apply ${i}`).toEqual(s.budgets);
      expect(row?.key_id).toBe(`key-${i}`);
    }
    // A third process starting now puts the highest version's set in force.
    const c = service();
    await c.start();
    const newest = versions.indexOf(Math.max(...versions));
    expect((await c.list()).version).toBe(versions[newest]);
    expect((await c.list()).budgets.map((x) => x.budget_id)).toEqual([`set-${newest}`]);
    await Promise.all([a.close(), b.close(), c.close()]);
  }, 60_000);
});
