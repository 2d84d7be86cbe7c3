/**
 * What every migrated database holds, whatever migration made the table: each MergeTree table
 * removes a replaced part a second after it was replaced and fsyncs merged parts (migrations 016
 * and 018), so no table added later leaves garbage in the data directory.
 */
import { describe, expect, it } from 'vitest';
import { freshDatabase, rows } from '../../helpers/clickhouse.ts';

describe('migrated schema', () => {
  it('gives every MergeTree table the part-cleanup settings', async () => {
    const { ch, db } = await freshDatabase('mig');
    const tables = await rows<{ name: string; q: string }>(ch, "SELECT name, create_table_query AS q FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'", { db });
    expect(tables.length).toBeGreaterThan(20);
    const missing = tables.filter((t) => !/old_parts_lifetime = 1\b/.test(t.q) || !/min_compressed_bytes_to_fsync_after_merge = 1\b/.test(t.q)).map((t) => t.name);
    expect(missing).toEqual([]);
  });
});
