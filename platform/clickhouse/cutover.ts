/**
 * The cutover of the window aggregates (migrations 015 and 017): the views of 015 count the calls
 * whose ingested_at is at or after it, the backfill of 017 those before it. Calls may be inserted
 * throughout (an `ingest` process beside `serve`), and each is still counted exactly once:
 *
 *  1. Wait until every insert begun before now has ended: every insert still running, or to come,
 *     began after 015's views existed and passes through them.
 *  2. Set the cutover C = now + {@link MARGIN_MS}, and check the row was stored before C. A view
 *     reads the cutover for each block after the block's ingested_at (the server's now64() at
 *     insert) is set, so a call with ingested_at ≥ C is read against C: counted by its view.
 *     Calls with ingested_at < C are refused by the views whether they read C or "not set yet".
 *  3. Wait until C has passed and every insert begun before it has ended: every call with
 *     ingested_at < C is stored, and none can come later. Then 017 counts them.
 */
import { AppError } from '../errors.ts';
import type { ClickHouseDoor } from './door.ts';

/** How far ahead of now the cutover is set: it must be stored before a view reads a later block. */
export const MARGIN_MS = 250;
const POLL_MS = 50;
/** An insert running longer than this across the migration fails it (retryable). */
const WAIT_LIMIT_MS = 600_000;

/** Server time, epoch ms: the clock of `now64()` defaults such as ingested_at. */
export async function serverNow(ch: ClickHouseDoor): Promise<number> {
  const [row] = await ch.select<{ ms: string }>('SELECT toUnixTimestamp64Milli(now64(3)) AS ms');
  return Number(row?.ms);
}

/** Waits until no INSERT begun before `beforeMs` (server time) runs. */
async function insertsEnded(ch: ClickHouseDoor, beforeMs: number): Promise<void> {
  const started = Date.now();
  for (;;) {
    // system.processes has no start time in 26.7: now − elapsed, a millisecond early to be safe.
    const [row] = await ch.select<{ n: string }>(
      `SELECT count() AS n FROM system.processes
       WHERE query_kind = 'Insert' AND toUnixTimestamp64Milli(now64(3)) - elapsed * 1000 <= {before:Int64} + 1`,
      { before: beforeMs },
    );
    if (Number(row?.n) === 0) return;
    if (Date.now() - started > WAIT_LIMIT_MS) throw new AppError('MIGRATION_FAILED', 'an insert has run for over 10 minutes while a migration waited for the inserts begun before it', { retryable: true });
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Waits until every INSERT begun before now (server time) has ended. */
export async function insertsBegunEnded(ch: ClickHouseDoor): Promise<void> {
  await insertsEnded(ch, await serverNow(ch));
}

/** Sets the cutover (unless a previous run did) and returns once 017 may backfill (module TSDoc). */
export async function settleCutover(ch: ClickHouseDoor): Promise<void> {
  const [set] = await ch.select<{ n: string; at: string }>('SELECT count() AS n, toUnixTimestamp64Milli(min(at)) AS at FROM {db:Identifier}.window_aggregates_cutover');
  let cutover = Number(set?.at);
  if (Number(set?.n) === 0) {
    await insertsBegunEnded(ch);
    cutover = (await serverNow(ch)) + MARGIN_MS;
    await ch.command('INSERT INTO {db:Identifier}.window_aggregates_cutover VALUES (fromUnixTimestamp64Milli({at:Int64}, \'UTC\'))', { at: cutover });
    const stored = await serverNow(ch);
    // Late (an overloaded server): calls ingested between C and now may have been refused by
    // their view; exact only if there are none.
    if (stored >= cutover) await noCallsBetween(ch, cutover, stored);
  }
  while ((await serverNow(ch)) < cutover) await new Promise((r) => setTimeout(r, POLL_MS));
  await insertsEnded(ch, cutover);
}

async function noCallsBetween(ch: ClickHouseDoor, fromMs: number, toMs: number): Promise<void> {
  await insertsEnded(ch, toMs);
  const [row] = await ch.select<{ n: string }>(
    `SELECT count() AS n FROM {db:Identifier}.tool_invocations
     WHERE ingested_at >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at < fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { from: fromMs, to: toMs },
  );
  if (Number(row?.n) > 0) {
    throw new AppError('MIGRATION_FAILED', 'the window aggregates cutover was stored late while calls were inserted: drop tables task_hours, tool_hours, tool_days, tool_durations, window_aggregates_cutover, their views, and the 015/017 rows of schema_migrations, then migrate again', { retryable: false });
  }
}

/**
 * Moves the cutover to the epoch, so that the views count every call inserted from now on whatever
 * its ingested_at. Only for a database still empty of calls, which generated histories and tests
 * fill with past ingested_at values (otherwise calls before the move would be counted by neither).
 */
export async function cutoverAtEpoch(ch: ClickHouseDoor): Promise<void> {
  await ch.command('TRUNCATE TABLE {db:Identifier}.window_aggregates_cutover');
  await ch.command("INSERT INTO {db:Identifier}.window_aggregates_cutover (at) VALUES ('1970-01-01 00:00:00.000')");
}
