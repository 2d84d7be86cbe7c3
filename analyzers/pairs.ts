/**
 * Which calls of a task depend on which (SPEC §4): every ordered pair (A, B) of one task with
 * 0 < created_at(B) − created_at(A) < window. Calls at the same millisecond are parallel, not
 * dependent. Pure; input order and repeated calls (redeliveries) do not change the result.
 */

/** The fields of a call the analysis needs. */
export interface CallPoint {
  call_id: string;
  tool_id: string;
  /** Epoch milliseconds. */
  t: number;
}

/** One dependency edge. */
export interface CallPair {
  preceding: CallPoint;
  succeeding: CallPoint;
  time_delta_ms: number;
}

/** Key of a pair, `preceding>succeeding`, as the ingest writer keys tool_workflows rows. */
export const pairKey = (preceding: string, succeeding: string): string => `${preceding}>${succeeding}`;

/** All dependent pairs of one task's calls, ordered by (preceding time, succeeding time). */
export function linkCalls(calls: readonly CallPoint[], windowMs: number): CallPair[] {
  const unique = new Map<string, CallPoint>();
  for (const c of calls) if (!unique.has(c.call_id)) unique.set(c.call_id, c);
  const sorted = [...unique.values()].sort((a, b) => a.t - b.t || (a.call_id < b.call_id ? -1 : 1));
  const pairs: CallPair[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i] as CallPoint;
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j] as CallPoint;
      const delta = b.t - a.t;
      if (delta >= windowMs) break;
      if (delta > 0) pairs.push({ preceding: a, succeeding: b, time_delta_ms: delta });
    }
  }
  return pairs;
}
