/**
 * What the HTTP edge produces to Kafka: no secret of the shared corpus in any record, and the
 * record decodes into exactly the row the packet as sent decodes into (the oracle: the decoder
 * on the original packet) — by a worker redacting again or by one that does not redact at all.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodePacket } from '../../../ingest/decode-packet.ts';
import { topicText } from '../../../ingest/edge-redaction.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { Redactor } from '../../../schemas/redaction-policy.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';
import { FOUND, INSIDE, SHAPES } from '../../helpers/secret-corpus.ts';

const redactor = new Redactor({ key: 'edge-redaction-test-key-0123456789' });
const http = (raw: string): RawPacket => ({ raw, source: { kind: 'http', requestId: 'r', index: 0 } });
const MAX = 1 << 20;

/** The record the edge produces, and the rows the worker stores from it and from the packet as sent. */
function produced(raw: string) {
  const sent = decodePacket(http(raw), MAX, redactor);
  const text = topicText(raw, sent, redactor);
  return { text, sent, again: decodePacket(http(text), MAX, redactor), plain: decodePacket(http(text), MAX) };
}

describe('topicText', () => {
  it.each(SHAPES.map(([what, args, secrets]) => [what, args, secrets] as const))('a call with %s: no secret in the record, the same row stored', (_what, args, secrets) => {
    // Numbers as Python writes them (1.0) ride along: the record keeps them as written.
    const raw = JSON.stringify(toolCall({ args, result_summary: { ok: true } })).replace('"result_summary":{"ok":true}', '"result_summary":{"ok":true,"ratio":1.0}');
    const { text, sent, again, plain } = produced(raw);
    expect(sent.ok).toBe(true);
    for (const s of secrets) expect(text).not.toContain(s);
    expect(text).toContain('1.0');
    expect(again).toEqual(sent);
    expect(plain).toEqual(sent);
  });

  it('an error, a text and a JSON content, a data_flow, a hint\'s evidence, an agent run\'s name and error and a turn\'s messages carry their secrets out, hashes kept', () => {
    for (const [rule, text, secret] of FOUND) {
      const call = JSON.parse(JSON.stringify(toolCall({ status: 'error', error: `failed: ${text}` })));
      const out = outputArtifact(call.call_id, `log line: ${text}`);
      const json = outputArtifact(call.call_id, JSON.stringify({ note: text }), 'json');
      const value = { ...json, content: { note: text } };
      const dep = dependency({ data_flow: `handed on ${text}` });
      const hint = {
        type: 'optimization_hint',
        hint: { hint_id: randomUUID(), kind: 'cache_candidate', tool_ids: ['search_web'], task_ids_sample: ['task-1'], evidence: { example_args: { note: text }, repeats: 3 }, estimated_savings_ms: 10, estimated_savings_usd: 0.5, window_from: '2026-11-22T00:00:00.000Z', window_to: '2026-11-22T01:00:00.000Z', created_at: '2026-11-22T01:00:00.000Z' },
      };
      const run = {
        type: 'agent_run',
        run: { run_id: randomUUID(), task_id: 'task-1', agent_id: 'planner', name: `answer ${text}`.slice(0, 256), duration_ms: 5, status: 'error', error: `gave up on ${text}`, trace_id: null, span_id: null, parent_span_id: null, created_at: '2026-11-22T01:00:00.000Z' },
      };
      const turn = {
        type: 'model_turn',
        turn: { turn_id: randomUUID(), task_id: 'task-1', agent_id: 'planner', model: 'm', provider: null, input_tokens: null, output_tokens: null, cached_input_tokens: null, cost_usd: null, cost_source: null, duration_ms: 5, status: 'success', error: null, requested_tool_calls: [], trace_id: null, span_id: null, created_at: '2026-11-22T01:00:00.000Z', messages: JSON.stringify({ 'gen_ai.input.messages': `use ${text}` }) },
      };
      for (const raw of [JSON.stringify(call), JSON.stringify(out), JSON.stringify(json), JSON.stringify(value), JSON.stringify(dep), JSON.stringify(hint), JSON.stringify(run), JSON.stringify(turn)]) {
        const { text: record, sent, again } = produced(raw);
        expect(sent.ok, `${rule}: ${raw.slice(0, 80)}`).toBe(true);
        expect(record, rule).not.toContain(secret);
        expect(again, rule).toEqual(sent);
      }
    }
  });

  it.each(INSIDE.map(([what, wrap]) => [what, wrap] as const))('JSON text inside a string (%s) of args, a result summary and a JSON content: no shape\'s secret in the record or the row', (_what, wrap) => {
    for (const [what, args, secrets] of SHAPES) {
      const call = toolCall({ args: wrap(args), result_summary: wrap(args) });
      const content = JSON.stringify(wrap(args));
      const packets = [call, outputArtifact(call.call_id as string, content, 'json'), { ...outputArtifact(call.call_id as string, content, 'json'), content: wrap(args) }];
      for (const raw of packets.map((p) => JSON.stringify(p))) {
        const { text: record, sent, again } = produced(raw);
        expect(sent.ok, what).toBe(true);
        for (const s of secrets) {
          expect(record, what).not.toContain(s);
          expect(JSON.stringify(sent), what).not.toContain(s);
        }
        expect(again, what).toEqual(sent);
      }
    }
  });

  it('a packet without secrets goes byte for byte; a rejected one as the quarantine keeps it', () => {
    const clean = JSON.stringify(toolCall({ args: { q: 'weather in Paris', n: 3 } }));
    expect(produced(clean).text).toBe(clean);
    const [, text, secret] = FOUND[0] as [string, string, string];
    // Refused for an unknown key that is itself a secret, with one in its args too.
    const bad = JSON.stringify({ ...toolCall({ args: { note: text } }), [secret]: 1 });
    const { text: record, sent } = produced(bad);
    expect(sent.ok).toBe(false);
    expect(record).not.toContain(secret);
    expect(record).toBe(redactor.packet(bad));
  });
});
