/**
 * What a process with embedded ClickHouse does before it closes the engine, so that its data
 * directory holds active parts only. ClickHouse removes the parts a merge replaced
 * from a per-table cleanup thread, never at an embedded table's shutdown (only a server's
 * shutdown does), so a process that exits leaves them on disk, as it leaves the temporary part
 * of a merge it was running. This stops the merges of the door's tables (a running merge is
 * cancelled and its temporary part removed; the next start merges again: nothing is lost, its
 * rows are all still in their source parts), then wakes each cleanup thread (`SYSTEM STOP
 * CLEANUP` + `START CLEANUP`: its own period may be 30 s or more, and a period changed by
 * migration 016 only applies from its second run) until the replaced parts are gone — a second
 * or so: migration 016 sets `old_parts_lifetime = 1`.
 */
import type { ClickHouseDoor } from './door.ts';

/** What {@link removeReplacedParts} left: zero and zero once the directory holds active parts only. */
export interface PartCleanup {
  /** Replaced (outdated) parts still on disk when it returned. */
  outdatedParts: number;
  /** Merges still running when it returned. */
  merges: number;
  waitedMs: number;
}

/**
 * Stops the merges of the door's MergeTree tables and waits (at most `timeoutMs`, default 10 s)
 * until none runs and no replaced part is left on disk. Call it last, right before the door is
 * closed: after it, merges of that database stay stopped for the rest of the process. A no-op
 * against a ClickHouse server (`gateState()` is null there), which keeps running and cleaning
 * after this process exits.
 */
export async function removeReplacedParts(door: ClickHouseDoor, opts: { timeoutMs?: number; pollMs?: number } = {}): Promise<PartCleanup> {
  const started = performance.now();
  if (door.gateState() === null) return { outdatedParts: 0, merges: 0, waitedMs: 0 };
  const tables = await door.select<{ name: string }>(
    "SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'",
  );
  for (const { name } of tables) await door.command('SYSTEM STOP MERGES {db:Identifier}.{t:Identifier}', { t: name });
  const deadline = started + (opts.timeoutMs ?? 10_000);
  for (;;) {
    const left = await door.select<{ table: string; outdated: string; merges: string }>(
      `SELECT table, sum(outdated) AS outdated, sum(merges) AS merges FROM (
         SELECT table, 1 AS outdated, 0 AS merges FROM system.parts WHERE database = {db:String} AND NOT active
         UNION ALL SELECT table, 0, 1 FROM system.merges WHERE database = {db:String})
       GROUP BY table`,
    );
    const state = {
      outdatedParts: left.reduce((n, r) => n + Number(r.outdated), 0),
      merges: left.reduce((n, r) => n + Number(r.merges), 0),
      waitedMs: Math.round(performance.now() - started),
    };
    if ((state.outdatedParts === 0 && state.merges === 0) || performance.now() >= deadline) return state;
    for (const { table } of left.filter((r) => Number(r.outdated) > 0)) {
      await door.command('SYSTEM STOP CLEANUP {db:Identifier}.{t:Identifier}', { t: table });
      await door.command('SYSTEM START CLEANUP {db:Identifier}.{t:Identifier}', { t: table });
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 250));
  }
}
