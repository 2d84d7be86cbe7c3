/**
 * The facts budgets need of a commit round's written calls and model turns, read back from their
 * TabSeparated lines (columns as SEGMENT_COLUMNS): only when a listener is wired, so ingest
 * without budgets pays nothing; with one, a split of a line per call or turn.
 */
import { tsvUnescape } from '../platform/clickhouse/door.ts';
import type { StoredCall } from './ports.ts';
import type { RoundIndex } from './round-index.ts';
import { SEGMENT_COLUMNS } from './row-lines.ts';
import type { RoundVerdict } from './verdict.ts';

type Field = 'id' | 'task_id' | 'tool_id' | 'agent_id' | 'cost_usd' | 'created_at';

/** Field positions of the columns budgets read, from the inserts' own column lists. */
function positions(table: 'tool_invocations' | 'model_turns', id: string): Record<Field, number> {
  const columns: readonly string[] = SEGMENT_COLUMNS[table];
  const at = (c: string): number => {
    const i = columns.indexOf(c);
    if (i < 0) throw new Error(`${table} has no column ${c}`);
    return i;
  };
  // A turn is no tool's call: -1 reads as ''.
  return { id: at(id), task_id: at('task_id'), tool_id: table === 'model_turns' ? -1 : at('tool_id'), agent_id: at('agent_id'), cost_usd: at('cost_usd'), created_at: at('created_at') };
}
const CALL = positions('tool_invocations', 'call_id');
const TURN = positions('model_turns', 'turn_id');

function costOf(line: string, col: Record<Field, number>): StoredCall {
  const f = line.split('\t');
  const text = (i: number): string => (i < 0 ? '' : tsvUnescape(f[i] as string));
  const cost = f[col.cost_usd];
  return {
    call_id: f[col.id] as string,
    task_id: text(col.task_id),
    tool_id: text(col.tool_id),
    agent_id: text(col.agent_id),
    cost_usd: cost === '\\N' || cost === undefined ? null : Number(cost),
    created_at_ms: Date.parse(`${(f[col.created_at] as string).replace(' ', 'T')}Z`),
  };
}

/**
 * The calls and model turns the round wrote (not redeliveries), as budgets count them; a turn
 * carries `kind: 'model'` and its turn_id as `call_id`.
 */
export function storedCosts(r: RoundIndex, v: RoundVerdict): StoredCall[] {
  const out: StoredCall[] = [];
  for (const i of v.fresh.invocation.values()) {
    const part = r.part(i, 'invocation');
    out.push(costOf(part.lines.buf.toString('utf8', part.start, part.end - 1), CALL));
  }
  for (const i of v.fresh.turn.values()) {
    const part = r.part(i, 'turn');
    out.push({ ...costOf(part.lines.buf.toString('utf8', part.start, part.end - 1), TURN), kind: 'model' });
  }
  return out;
}
