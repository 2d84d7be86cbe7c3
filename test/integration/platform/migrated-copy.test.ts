/**
 * Tests take their fresh databases as copies of one migrated per process (test/helpers/clickhouse.ts):
 * a copy must be the database migrate makes. The oracle is migrate itself, run on a database of its
 * own: the same tables and views with the same definitions, the same rows, and nothing left for a
 * later migrate to apply.
 */
import { describe, expect, it } from 'vitest';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { migrate } from '../../../platform/clickhouse/migrate.ts';
import { freshDatabase, rows, testClickHouse } from '../../helpers/clickhouse.ts';

const RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };

async function schemaOf(db: string): Promise<Array<{ name: string; engine: string; create: string }>> {
  const ch = await testClickHouse();
  const got = await rows<{ name: string; engine: string; create: string }>(ch, 'SELECT name, engine, create_table_query AS create FROM system.tables WHERE database = {db:String} ORDER BY name', { db });
  return got.map((t) => ({ ...t, create: t.create.replaceAll(`${db}.`, 'DB.') }));
}

describe('a fresh test database', () => {
  it('is the schema and the rows migrate makes, and migrate finds nothing to apply', async () => {
    const ch = await testClickHouse();
    const direct = `migrated_${Date.now().toString(36)}`;
    const made = await migrate(createClickHouseDoor(ch, direct), { retentionDays: RETENTION });
    const { db, door } = await freshDatabase('copy');

    const want = await schemaOf(direct);
    expect(want.length).toBeGreaterThan(40);
    expect(await schemaOf(db)).toEqual(want);
    const names = (d: string) => rows<{ name: string }>(ch, 'SELECT name FROM {db:Identifier}.schema_migrations ORDER BY name', { db: d });
    expect(await names(db)).toEqual(await names(direct));
    expect((await names(db)).map((r) => r.name)).toEqual(made.applied);
    const cutovers = (d: string) => rows<{ n: string }>(ch, 'SELECT count() AS n FROM {db:Identifier}.window_aggregates_cutover', { db: d });
    expect(Number((await cutovers(db))[0]?.n)).toBe(1);
    expect(Number((await cutovers(direct))[0]?.n)).toBe(1);

    const again = await migrate(door, { retentionDays: RETENTION });
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(made.applied);
  });
});
