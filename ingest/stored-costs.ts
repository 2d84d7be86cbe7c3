/**
 * The facts budgets need of a commit round's written calls, read back from their TabSeparated
 * lines (columns as SEGMENT_COLUMNS.tool_invocations): only when a listener is wired, so ingest
 * without budgets pays nothing; with one, a split of a line per call.
 */
import { tsvUnescape } from '../platform/clickhouse/door.ts';
import type { StoredCall } from './ports.ts';
import type { RoundIndex } from './round-index.ts';
import { SEGMENT_COLUMNS } from './rows.ts';
import type { RoundVerdict } from './verdict.ts';

/** The calls the round wrote (not redeliveries), as budgets count them. */
export function storedCalls(r: RoundIndex, v: RoundVerdict): StoredCall[] {
  const calls: StoredCall[] = [];
  for (const i of v.fresh.invocation.values()) {
    const part = r.part(i, 'invocation');
    const f = part.lines.buf.toString('utf8', part.start, part.end - 1).split('\t');
    const cost = f[COL.cost_usd] === '\\N' || f[COL.cost_usd] === undefined ? null : Number(f[COL.cost_usd]);
    calls.push({
      call_id: f[COL.call_id] as string,
      task_id: tsvUnescape(f[COL.task_id] as string),
      tool_id: tsvUnescape(f[COL.tool_id] as string),
      agent_id: tsvUnescape(f[COL.agent_id] as string),
      cost_usd: cost,
      created_at_ms: Date.parse(`${(f[COL.created_at] as string).replace(' ', 'T')}Z`),
    });
  }
  return calls;
}

/** Field positions of the columns budgets read, from the insert's own column list. */
const COL = Object.fromEntries(
  (['call_id', 'task_id', 'tool_id', 'agent_id', 'cost_usd', 'created_at'] as const).map((c) => {
    const at = SEGMENT_COLUMNS.tool_invocations.indexOf(c);
    if (at < 0) throw new Error(`tool_invocations has no column ${c}`);
    return [c, at];
  }),
) as Record<'call_id' | 'task_id' | 'tool_id' | 'agent_id' | 'cost_usd' | 'created_at', number>;

