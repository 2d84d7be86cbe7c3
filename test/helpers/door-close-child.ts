/**
 * A process that closes its ClickHouse door while native work is still running, then exits the way
 * every command does (process.exit(0)), and prints what close() waited for. For
 * test/integration/platform/door-close.test.ts.
 *
 *  - A statement of the door still running (sent, not awaited): it answers whole. (That close
 *    sends nothing to a client before the statement has answered is test/unit/platform/lanes.test.ts:
 *    the caller's promise settles some turns after the statement's, so its timing here says nothing.)
 *  - A statement of another connection on the same directory whose promise was settled early by
 *    its abort signal: chDB keeps running it natively and defers that connection's teardown, and
 *    the door's own connections' teardowns with it.
 *
 * After close() the engine must be released: chDB then lets this process open another data
 * directory (it refuses while any connection to the first is still held).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'chdb';
import { configOrExit } from '../../cli/runtime.ts';
import { createLaneClients } from '../../platform/clickhouse/client.ts';
import { createClickHouseDoor } from '../../platform/clickhouse/door.ts';

/** `rows` × 50 ms of engine time whatever the machine's speed. */
const slow = (rows: number) => `SELECT count() AS n FROM numbers(${rows}) WHERE sleepEachRow(0.05) = 0 SETTINGS max_block_size = 1`;

const config = configOrExit();
const door = createClickHouseDoor(await createLaneClients(config.clickhouse), config.clickhouse.database);
const other = new Session(config.clickhouse.dataDir);
const abort = new AbortController();
// It outlasts the door's statement by ~1.5 s: still running when the door's close begins.
const early = other.queryAsync(slow(50), { signal: abort.signal }).then(
  () => 'answered',
  (err: unknown) => `rejected: ${(err as Error).name}`,
);
setTimeout(() => abort.abort(), 100);
const running = door.select<{ n: number }>(slow(20));
await new Promise((r) => setTimeout(r, 200));
other.close();
await door.close();
let otherDirectory = 'opened';
try {
  new Session(mkdtempSync(join(tmpdir(), 'ta-close-other-'))).close();
} catch (err) {
  otherDirectory = (err as Error).message.split('\n')[0] ?? 'refused';
}
process.stdout.write(`${JSON.stringify({ early: await early, rows: await running, otherDirectory })}\n`);
process.exit(0);
