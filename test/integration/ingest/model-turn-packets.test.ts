/**
 * model_turn packets, as an emitter or a producer sends them: over HTTP (POST /v1/packets) and
 * over Kafka they land in model_turns once; a redelivery is a duplicate, another turn under the
 * same id an I1 conflict, a success with an error I3; a turn without a cost is priced from the
 * table. Oracles: the values sent, and the cost worked out by hand from the table's prices.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { count, rows } from '../../helpers/clickhouse.ts';
import { testKafka } from '../../helpers/kafka.ts';
import { goodTwiceAndBad, packetApp } from '../../helpers/packet-trips.ts';
import { toolCall } from '../../helpers/packets.ts';

const AT = new Date(Date.now() - 3_600_000).toISOString();

function turnPacket(over: Record<string, unknown> = {}) {
  return {
    type: 'model_turn',
    turn: {
      turn_id: randomUUID(),
      task_id: 'task-turns',
      agent_id: 'planner',
      model: 'gpt-4o-mini-2024-07-18',
      provider: 'openai',
      input_tokens: 2000,
      output_tokens: 150,
      cached_input_tokens: 1000,
      cost_usd: null,
      cost_source: null,
      duration_ms: 830,
      status: 'success',
      error: null,
      requested_tool_calls: [{ id: 'call_a', tool_id: 'search_web' }],
      trace_id: null,
      span_id: null,
      created_at: AT,
      ...over,
    },
  };
}


interface TurnRow { turn_id: string; model: string; input_tokens: string; cost_usd: number | null; cost_source: string | null; requested_tool_calls: string; created_at: string }

describe('model_turn packets', () => {
  it('over HTTP: stored once and priced, redelivery a duplicate, bad ones quarantined with their reason', async () => {
    const { ch, db, app, c } = await packetApp('turnp');
    const priced = turnPacket();
    const reported = turnPacket({ model: 'in-house-7b', cost_usd: 0.0123, cost_source: 'reported', requested_tool_calls: [] });
    const first = (await c.postPackets(JSON.stringify([priced, reported]))).json();
    expect(first).toMatchObject({ accepted: 2, rejected: 0, duplicates: 0 });
    expect(first.results[0]).toMatchObject({ packet_type: 'model_turn', ids: [priced.turn.turn_id] });

    const bad = [
      priced,
      turnPacket({ turn_id: priced.turn.turn_id, output_tokens: 151 }),
      turnPacket({ error: 'but it worked' }),
      turnPacket({ input_tokens: -1 }),
      turnPacket({ messages: [] }),
    ];
    const second = (await c.postPackets(JSON.stringify(bad))).json();
    expect(second.results.map((r: { status: string; reason?: { code: string } }) => r.reason?.code ?? r.status)).toEqual(['duplicate', 'I1_turn_id_reused', 'I3_error_on_success', 'schema', 'schema']);
    expect(await count(ch, db, 'model_turns')).toBe(2);
    const q = await rows<{ packet_type: string }>(ch, 'SELECT packet_type FROM {db:Identifier}.quarantine', { db });
    expect(q).toHaveLength(4);
    expect(q.every((r) => r.packet_type === 'model_turn')).toBe(true);

    const stored = await rows<TurnRow>(ch, "SELECT toString(turn_id) AS turn_id, model, input_tokens, cost_usd, cost_source, requested_tool_calls, formatDateTime(created_at, '%Y-%m-%dT%H:%i:%S.%fZ') AS created_at FROM {db:Identifier}.model_turns ORDER BY model", { db });
    // gpt-4o-mini: 1000 uncached input at 0.15, 1000 cached at 0.075, 150 output at 0.6 per million.
    const cost = (1000 * 0.15 + 1000 * 0.075 + 150 * 0.6) / 1e6;
    expect(stored[0]).toMatchObject({ turn_id: priced.turn.turn_id, model: 'gpt-4o-mini-2024-07-18', cost_source: 'price_table', created_at: AT.replace(/\.(\d{3})Z$/, '.$1000Z') });
    expect(stored[0]?.cost_usd).toBeCloseTo(cost, 12);
    expect(JSON.parse(stored[0]!.requested_tool_calls)).toEqual([{ id: 'call_a', tool_id: 'search_web' }]);
    expect(stored[1]).toMatchObject({ model: 'in-house-7b', cost_usd: 0.0123, cost_source: 'reported' });
    await app.close();
  });

  it('GET /v1/cost/models: per model and per agent, beside each agent\'s tool calls and tool cost', async () => {
    const { app, c } = await packetApp('turnc');
    const call = (agent: string, cost: number) => toolCall({ agent_id: agent, cost_usd: cost, created_at: AT }, 'task-cost');
    const sent = [
      turnPacket({ agent_id: 'planner', model: 'gpt-4o', input_tokens: 1000, output_tokens: 100, cached_input_tokens: null }),
      turnPacket({ agent_id: 'planner', model: 'gpt-4o', input_tokens: 2000, output_tokens: 0, cached_input_tokens: 500 }),
      turnPacket({ agent_id: 'writer', model: 'in-house-7b', input_tokens: 50, output_tokens: 5, cached_input_tokens: null }),
      turnPacket({ agent_id: 'writer', model: 'in-house-7b', input_tokens: 10, output_tokens: 1, cached_input_tokens: null, cost_usd: 0.25, cost_source: 'reported' }),
      call('planner', 0.5),
      call('planner', 0.25),
      call('fetcher', 0.125),
    ];
    expect((await c.postPackets(JSON.stringify(sent))).json()).toMatchObject({ accepted: 7, rejected: 0 });
    const from = new Date(Date.parse(AT) - 60_000).toISOString();
    const res = await c.get(`/v1/cost/models?from=${from}`);
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json();
    // gpt-4o at 2.5 in / 1.25 cached / 10 out per million tokens.
    const gpt = (1000 * 2.5 + 100 * 10 + 1500 * 2.5 + 500 * 1.25) / 1e6;
    expect(r.models).toHaveLength(2);
    expect(r.models[0]).toMatchObject({ model: 'in-house-7b', provider: 'openai', turns: 2, input_tokens: 60, output_tokens: 6, cost_usd: 0.25, unpriced_turns: 1 });
    expect(r.models[1]).toMatchObject({ model: 'gpt-4o', turns: 2, input_tokens: 3000, output_tokens: 100, cached_input_tokens: 500, unpriced_turns: 0 });
    expect(r.models[1].cost_usd).toBeCloseTo(gpt, 12);
    const agents = Object.fromEntries(r.agents.map((a: { agent_id: string }) => [a.agent_id, a]));
    expect(agents.planner).toMatchObject({ turns: 2, tool_calls: 2, tool_cost_usd: 0.75 });
    expect(agents.writer).toMatchObject({ turns: 2, cost_usd: 0.25, tool_calls: 0, tool_cost_usd: 0 });
    expect(agents.fetcher).toMatchObject({ turns: 0, cost_usd: 0, tool_calls: 1, tool_cost_usd: 0.125 });
    expect(r.totals).toMatchObject({ turns: 4, input_tokens: 3060, output_tokens: 106, unpriced_turns: 1, tool_calls: 3, tool_cost_usd: 0.875 });
    expect(r.totals.model_cost_usd).toBeCloseTo(gpt + 0.25, 12);
    await app.close();
  });

  describe('over Kafka', () => {
    const kafka = testKafka();

    it('stores a turn from the topic once and quarantines a bad one', async () => {
      const good = turnPacket();
      const { ch, db, names } = await goodTwiceAndBad(kafka, { name: 'turns', key: good.turn.task_id, good, bad: turnPacket({ status: 'success', error: 'x' }), table: 'model_turns' });
      const [row] = await rows<{ turn_id: string; source: string }>(ch, 'SELECT toString(turn_id) AS turn_id, source FROM {db:Identifier}.model_turns', { db });
      expect(row?.turn_id).toBe(good.turn.turn_id);
      expect(row?.source).toMatch(new RegExp(`^kafka:${names.topic}/`));
      expect(await rows(ch, 'SELECT reason_code FROM {db:Identifier}.quarantine', { db })).toEqual([{ reason_code: 'I3_error_on_success' }]);
    });
  });
});
