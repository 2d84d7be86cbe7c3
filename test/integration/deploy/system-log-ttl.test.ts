/**
 * The compose ClickHouse's retention of its own logs (deploy/clickhouse/config.d/system-log-ttl.xml):
 * every TTL it sets is an expression ClickHouse accepts on a table with that log's date column,
 * and deletes what is older than seven days. Checked on the embedded engine (no server here):
 * a table per log with the TTL, rows of today and of eight days ago, then the TTL applied.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../../helpers/clickhouse.ts';

const xml = readFileSync(new URL('../../../deploy/clickhouse/config.d/system-log-ttl.xml', import.meta.url), 'utf8');
const logs = [...xml.matchAll(/<([a-z_]+)>\s*<ttl>([^<]+)<\/ttl>\s*<\/\1>/g)].map((m) => ({ name: m[1]!, ttl: m[2]! }));

describe('ClickHouse system log retention in compose', () => {
  it('lists the logs that grow with use, each with a TTL that ClickHouse accepts and applies', async () => {
    expect(logs.map((l) => l.name)).toEqual(expect.arrayContaining(['query_log', 'trace_log', 'part_log', 'metric_log', 'asynchronous_metric_log', 'query_thread_log']));
    const { door } = await freshDatabase('syslog_ttl');
    for (const { name, ttl } of logs) {
      const column = /^(\w+) \+ INTERVAL 7 DAY DELETE$/.exec(ttl)?.[1];
      expect(column, `${name}: ${ttl}`).toMatch(/^(event_date|finish_date)$/);
      // The expression comes from the repository's own file, checked just above to be of one shape.
      await door.command(`CREATE TABLE {db:Identifier}.${name} (${column} Date, n UInt8) ENGINE = MergeTree ORDER BY n TTL ${ttl}`);
      await door.command(`INSERT INTO {db:Identifier}.${name} VALUES (today(), 1), (today() - 8, 2)`);
      await door.command(`OPTIMIZE TABLE {db:Identifier}.${name} FINAL`);
      const left = await door.select<{ n: number }>(`SELECT n FROM {db:Identifier}.${name} ORDER BY n`);
      expect(left.map((r) => Number(r.n)), name).toEqual([1]);
    }
  });
});
