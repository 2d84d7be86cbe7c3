/**
 * The zod-free packet check (packet-check.ts) gives exactly what zod gives: decodePacketWith with
 * the fast path on and off, on generated, valid and mutated packets.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { workload } from '../../../bench/ingest/ingest-workload.ts';
import { decodePacketWith } from '../../../ingest/decode-packet.ts';
import { isValidPacket, packetCheckEnabled } from '../../../ingest/packet-check.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { packetSchema } from '../../../schemas/packets.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';

const raw = (text: string): RawPacket => ({ raw: text, source: { kind: 'kafka', topic: 't', partition: 1, offset: '7' } });
const both = (text: string) => [decodePacketWith(raw(text), 1 << 20, { fastPath: true }), decodePacketWith(raw(text), 1 << 20, { fastPath: false })];

// Valid packets of every shape the pipeline sees.
const valid: string[] = [];
for (const m of workload({ toolCalls: 300, seed: 11, invalidRate: 0, reuseRate: 0 })) valid.push(m.value);
valid.push(
  JSON.stringify(toolCall({}, null)),
  JSON.stringify(toolCall({ status: 'error', error: 'boom', cost_usd: null, tokens_used: null, instance_id: 'k-1' })),
  JSON.stringify(outputArtifact('3b241101-e2bb-4255-8caf-4136c566a962', 'a,b\n1,2\n', 'csv')),
  JSON.stringify({ ...outputArtifact('3b241101-e2bb-4255-8caf-4136c566a962', '{"a":[1,2]}', 'json'), content: { a: [1, 2] } }),
  JSON.stringify({ ...outputArtifact('3b241101-e2bb-4255-8caf-4136c566a962', '[1,2]', 'json'), content: [1, 2] }),
  JSON.stringify(dependency()),
  JSON.stringify(dependency({ time_delta_ms: -5 })),
  JSON.stringify({ type: 'model_turn', turn: { turn_id: '3b241101-e2bb-4255-8caf-4136c566a962', task_id: 't', agent_id: 'a', model: 'gpt-4o', provider: 'openai', input_tokens: 1200, output_tokens: 40, cached_input_tokens: 1000, cost_usd: 0.0034, cost_source: 'reported', duration_ms: 812, status: 'success', error: null, requested_tool_calls: [{ id: 'call_1', tool_id: 'search' }, { id: null, tool_id: 'fetch' }], trace_id: '5b8efff798038103d269b633813fc60c', span_id: 'eee19b7ec3c1b174', created_at: '2026-11-22T10:00:00.000Z' } }),
  JSON.stringify({ type: 'model_turn', turn: { turn_id: '3b241101-e2bb-4255-8caf-4136c566a963', task_id: 't', agent_id: 'a', model: 'm', provider: null, input_tokens: null, output_tokens: null, cached_input_tokens: null, cost_usd: null, cost_source: null, duration_ms: 0, status: 'error', error: 'overloaded', requested_tool_calls: [], trace_id: null, span_id: null, created_at: '2026-11-22T10:00:00Z' } }),
  JSON.stringify({ type: 'model_turn', turn: { turn_id: '3b241101-e2bb-4255-8caf-4136c566a966', task_id: 't', agent_id: 'a', model: 'm', provider: null, input_tokens: 1, output_tokens: 1, cached_input_tokens: null, cost_usd: null, cost_source: null, duration_ms: 1, status: 'success', error: null, requested_tool_calls: [], trace_id: null, span_id: null, created_at: '2026-11-22T10:00:00Z', messages: '{"gen_ai.input.messages":"[]"}' } }),
  JSON.stringify({ type: 'agent_run', run: { run_id: '3b241101-e2bb-4255-8caf-4136c566a964', task_id: 't', agent_id: 'a', name: 'invoke_agent a', duration_ms: 4000, status: 'success', error: null, trace_id: '5b8efff798038103d269b633813fc60c', span_id: 'eee19b7ec3c1b174', parent_span_id: '00f067aa0ba902b7', created_at: '2026-11-22T10:00:00.000Z' } }),
  JSON.stringify({ type: 'agent_run', run: { run_id: '3b241101-e2bb-4255-8caf-4136c566a965', task_id: 't', agent_id: 'a', name: 'x', duration_ms: 0, status: 'error', error: 'gave up', trace_id: null, span_id: null, parent_span_id: null, created_at: '2026-11-22T10:00:00+01:00' } }),
);

describe('zod-free packet check', () => {
  it('is active', () => {
    expect(packetCheckEnabled).toBe(true);
  });

  it('accepts the valid packets, with the same decode results as zod', () => {
    for (const v of valid) {
      expect(isValidPacket(JSON.parse(v)), v).toBe(true);
      const [fast, slow] = both(v);
      expect(fast).toEqual(slow);
    }
  });

  it('only accepts what zod accepts, and decodes mutated packets identically', () => {
    const paths = (o: unknown, prefix: string[] = []): string[][] =>
      typeof o === 'object' && o !== null && !Array.isArray(o)
        ? Object.entries(o).flatMap(([k, v]) => [[...prefix, k], ...paths(v, [...prefix, k])])
        : [];
    const weird = fc.oneof(
      fc.constant(null),
      fc.constant(''),
      fc.constant(-1),
      fc.constant(0),
      fc.constant(1.5),
      fc.constant(Number.POSITIVE_INFINITY),
      fc.constant(2 ** 53),
      fc.constant('x'.repeat(257)),
      fc.constant('2026-02-30T10:00:00Z'),
      fc.constant('2200-01-01T00:00:00Z'),
      fc.constant('1969-12-31T23:59:59.999Z'),
      fc.constant('2199-12-31T23:59:59.999+00:00'),
      fc.constant('3B241101-E2BB-4255-8CAF-4136C566A962'),
      fc.constant('A'.repeat(64)),
      fc.constant([]),
      fc.constant({ __proto__: 1 }),
      fc.constant(JSON.parse('{"__proto__": {"a": 1}, "b": 2}')),
      fc.constant({ input_tokens: -1 }),
      fc.constant({ input_tokens: 1.5 }),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: valid.length - 1 }), fc.nat(), weird, fc.constantFrom('set', 'delete', 'add'), (which, pick, value, op) => {
        const packet = JSON.parse(valid[which] as string) as Record<string, unknown>;
        const all = paths(packet);
        const path = all[pick % all.length] as string[];
        let target = packet as Record<string, unknown>;
        for (const k of path.slice(0, -1)) target = target[k] as Record<string, unknown>;
        const last = path[path.length - 1] as string;
        if (op === 'set') target[last] = value;
        else if (op === 'delete') delete target[last];
        else target[`extra_${last}`] = value;
        const text = JSON.stringify(packet);
        if (isValidPacket(JSON.parse(text))) expect(packetSchema.safeParse(JSON.parse(text)).success).toBe(true);
        const [fast, slow] = both(text);
        expect(fast).toEqual(slow);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees on number literals JSON.parse turns into Infinity or unsafe integers', () => {
    const p = JSON.stringify(JSON.parse(valid[0] as string));
    for (const [from, to] of [
      [/"duration_ms":\d+/, '"duration_ms":1e400'],
      [/"duration_ms":\d+/, '"duration_ms":9007199254740993'],
      [/"duration_ms":\d+/, '"duration_ms":1.0'],
      [/"cost_usd":[^,]+/, '"cost_usd":1e400'],
      [/"cost_usd":[^,]+/, '"cost_usd":-0.0'],
    ] as const) {
      const text = p.replace(from, to);
      expect(text).not.toBe(p);
      const [fast, slow] = both(text);
      expect(fast).toEqual(slow);
    }
  });

  it('leaves records with an own __proto__ key to zod (which strips the key)', () => {
    const p = JSON.parse(valid[0] as string) as { invocation: { args: Record<string, unknown> } };
    const text = JSON.stringify(p).replace('"args":{', '"args":{"__proto__":{"x":1},');
    expect(isValidPacket(JSON.parse(text))).toBe(false);
    const [fast, slow] = both(text);
    expect(fast).toEqual(slow);
  });
});
