/**
 * A process that opens embedded ClickHouse, then runs out of JavaScript heap: what a job that
 * brought too many rows into memory did. argv: data directory, watchdog timeout ms.
 * Started by test/integration/platform/watchdog.test.ts under a small --max-old-space-size.
 */
import { createClickHouse } from '../../platform/clickhouse/client.ts';
import { startWatchdog } from '../../platform/watchdog.ts';

const [dataDir = '', timeout = '0'] = process.argv.slice(2);
startWatchdog({ timeoutMs: Number(timeout), name: 'heap-exhaust-child' });
const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, database: 'default', dataDir });
await (await ch.query({ query: 'SELECT 1', format: 'JSONEachRow' })).json();
process.stdout.write('clickhouse open\n');
const kept: object[] = [];
setInterval(() => {
  for (let i = 0; i < 100_000; i++) kept.push({ i, s: `row ${i}` });
}, 1);
