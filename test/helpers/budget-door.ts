/**
 * A stand-in ClickHouse door for the budget service's unit tests: it keeps the decisions inserted,
 * can refuse inserts for a while (`state.down`), and answers the version claim of an apply
 * (analyzers/manifest-claims.ts) as an empty database would: nothing written or claimed yet, and
 * the apply's own claim the earliest of its number. Every other read is empty.
 */
import type { ClickHouseDoor, KeyedRow } from '../../platform/clickhouse/door.ts';
import { AppError } from '../../platform/errors.ts';

/** The door, the decisions it took, and the switch that makes it refuse inserts. */
export function budgetDoor(nowMs = Date.UTC(2026, 0, 1)): { door: ClickHouseDoor; decisions: KeyedRow[]; state: { down: boolean } } {
  const decisions: KeyedRow[] = [];
  const state = { down: false };
  let claim = '';
  const door = {
    database: 'db',
    read: async () => [],
    select: async (sql: string) => (sql.includes('apply_id') ? [{ id: claim }] : sql.includes('AS claimed') ? [{ written: null, claimed: null, claimed_ms: null, now_ms: nowMs }] : []),
    insertRows: async (table: string, rows: readonly KeyedRow[]) => {
      if (state.down) throw new AppError('CLICKHOUSE_UNAVAILABLE', 'down', { retryable: true });
      if (table === 'budget_decisions') decisions.push(...rows);
      if (table === 'budget_claims') claim = (rows[0]?.row as { apply_id: string }).apply_id;
    },
  } as unknown as ClickHouseDoor;
  return { door, decisions, state };
}
