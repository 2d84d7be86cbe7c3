/**
 * Which call answers which request of a turn: by tool-call id when the dialect has ids, else the
 * first call of the tool after the turn not claimed by another request. Oracle: the pairs written
 * here by hand.
 */
import { describe, expect, it } from 'vitest';
import { linkTurns, type TurnReadRow } from '../../../queries/model-turns.ts';

const turn = (id: string, ms: number, asked: Array<{ id: string | null; tool_id: string }>): TurnReadRow => ({
  turn_id: id, task_id: 't', agent_id: 'a', model: 'm', provider: null, input_tokens: '10', output_tokens: '2', cached_input_tokens: null,
  cost_usd: null, cost_source: null, duration_ms: '5', status: 'success', error: null, requested_tool_calls: JSON.stringify(asked), trace_id: '', span_id: '', created_ms: String(ms), messages: null,
});
const at = (ms: number) => new Date(ms).toISOString();

describe('linkTurns', () => {
  it('matches requests by tool-call id, and without ids by tool and order after the turn', () => {
    const calls = [
      { call_id: 'c0', tool_id: 'search', created_at: at(500) },
      { call_id: 'c1', tool_id: 'search', created_at: at(1500), tool_call_id: 'x1' },
      { call_id: 'c2', tool_id: 'search', created_at: at(1600) },
      { call_id: 'c3', tool_id: 'fetch', created_at: at(1700) },
      { call_id: 'c4', tool_id: 'search', created_at: at(2600) },
    ];
    const [first, second] = linkTurns([turn('t1', 1000, [{ id: 'x1', tool_id: 'search' }, { id: 'gone', tool_id: 'fetch' }]), turn('t2', 1100, [{ id: null, tool_id: 'search' }, { id: null, tool_id: 'search' }, { id: null, tool_id: 'fetch' }])], calls);
    expect(first?.requested_tool_calls.map((q) => q.call_id)).toEqual(['c1', null]);
    // c0 is before the turn, c1 answered x1: the id-less requests take c2, c4, c3.
    expect(second?.requested_tool_calls.map((q) => q.call_id)).toEqual(['c2', 'c4', 'c3']);
    expect(first).toMatchObject({ input_tokens: 10, output_tokens: 2, duration_ms: 5, trace_id: null, created_at: at(1000) });
  });
});
