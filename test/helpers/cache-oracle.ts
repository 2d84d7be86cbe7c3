/**
 * The cache replay as the obvious brute force, for tests to judge the cache simulation and the
 * kept replays by: every call checked against every earlier entry of its key, in (created_at,
 * call_id) order.
 */
import type { RawCall } from './raw-calls.ts';

/** The obvious replay: entries as a list, a hit when some entry of the key is live. */
export function bruteForce(calls: RawCall[], ttl: number): { calls: number; hits: number; saved_ms: number; saved_usd: number } {
  const ordered = [...calls].sort((a, b) => a.t - b.t || (a.call_id < b.call_id ? -1 : 1));
  const entries: Array<{ key: string; from: number }> = [];
  let hits = 0;
  let savedMs = 0;
  let savedUsd = 0;
  for (const c of ordered) {
    const key = `${c.tool_id}/${c.args_hash}`;
    const live = entries.some((e) => e.key === key && e.from <= c.t && c.t < e.from + ttl);
    if (live) {
      hits++;
      savedMs += c.duration_ms;
      savedUsd += c.cost_usd ?? 0;
    } else if (c.status === 'success') entries.push({ key, from: c.t });
  }
  return { calls: calls.length, hits, saved_ms: savedMs, saved_usd: savedUsd };
}
