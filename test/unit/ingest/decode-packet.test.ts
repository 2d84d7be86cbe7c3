import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chCreatedAt } from '../../../ingest/decode-common.ts';
import { decodePacket, decodeText } from '../../../ingest/decode-packet.ts';
import { chTime } from '../../../platform/clickhouse/statement.ts';
import type { RawPacket } from '../../../ingest/rows.ts';
import { dependency, outputArtifact, sha, toolCall } from '../../helpers/packets.ts';

const raw = (p: unknown): RawPacket => ({ raw: typeof p === 'string' ? p : JSON.stringify(p), source: { kind: 'http', requestId: 'r', index: 0 } });
const decode = (p: unknown, max = 1 << 20) => decodePacket(raw(p), max);
const code = (p: unknown) => {
  const r = decode(p);
  return r.ok ? 'ok' : r.error.code;
};

const cid = '3b241101-e2bb-4255-8caf-4136c566a962';

describe('good packets pass', () => {
  it.each([
    ['tool_call success', toolCall()],
    ['tool_call without task', toolCall({}, null)],
    ['tool_call error with message', toolCall({ status: 'error', error: 'boom', cost_usd: null, tokens_used: null })],
    ['tool_call timeout', toolCall({ status: 'timeout', error: 'timed out after 30000 ms', duration_ms: 30000 })],
    ['tool_call with optional fields omitted', (() => { const p = toolCall(); const i = p.invocation as Record<string, unknown>; delete i.error; delete i.cost_usd; delete i.tokens_used; delete i.task_id; return p; })()],
    ['tool_call non-ASCII, nested, SQL and code args', toolCall({ args: { q: "Zürich ' OR 1=1; DROP TABLE x --", code: 'print("hi")\n', n: { a: [1, { b: null }] } } })],
    ['output text', outputArtifact(cid)],
    ['output json string', outputArtifact(cid, '{"a": [1, 2]}', 'json')],
    ['output csv', outputArtifact(cid, 'a,b\n1,"x,y"\n2,3\n', 'csv')],
    ['output html', outputArtifact(cid, '<html><body>hi</body></html>', 'html')],
    ['output chart id', outputArtifact(cid, 'chart-42', 'chart_id')],
    ['output with null sample', outputArtifact(cid, 'x', 'text', { sample: null })],
    ['output with long astral content', (() => { const c = '😀'.repeat(600); return outputArtifact(cid, c, 'text', { sample: [...c].slice(0, 500).join('') }); })()],
    ['dependency', dependency()],
  ])('%s', (_name, packet) => {
    expect(code(packet)).toBe('ok');
  });

  it('accepts a JSON content value hashed as compact JSON', () => {
    const content = { rows: [1, 2], name: 'x' };
    const text = JSON.stringify(content);
    const p = outputArtifact(cid, text, 'json');
    expect(code({ ...p, content })).toBe('ok');
  });

  it('accepts every Python-written packet of the fixture (numbers as Python wrote them)', () => {
    const lines = readFileSync(new URL('../../fixtures/python-packets.jsonl', import.meta.url), 'utf8').split('\n').filter(Boolean);
    for (const l of lines) {
      const { packet, canonical } = JSON.parse(l) as { packet: string; canonical: string };
      const r = decode(packet);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      if (r.ok && r.value.kind === 'invocation') expect(r.value.row.args).toBe(canonical);
    }
  });

  it('normalizes created_at to milliseconds in UTC and call ids to lowercase', () => {
    const r = decode(toolCall({ call_id: cid.toUpperCase(), created_at: '2026-11-22T12:00:00.123456+02:00' }));
    expect(r.ok && r.value.kind === 'invocation' && r.value.row.created_at).toBe('2026-11-22 10:00:00.123');
  });
});

describe('every MUST rule rejects with a reason', () => {
  const tc = toolCall();
  it.each([
    ['malformed JSON', '{"type": "tool_call",', 'malformed_json'],
    ['not an object', '42', 'schema'],
    ['unknown packet type', { type: 'tool_result', call_id: cid }, 'schema'],
    ['unknown field in invocation (I2: rejected, not stripped)', toolCall({ extra: 1 }), 'schema'],
    ['unknown field in envelope', { ...tc, extra: true }, 'schema'],
    ['negative duration (I2)', toolCall({ duration_ms: -1 }), 'schema'],
    ['fractional duration (I2)', toolCall({ duration_ms: 1.5 }), 'schema'],
    ['status outside the enum (I2)', toolCall({ status: 'ok' }), 'schema'],
    ['orchestrator outside the enum', toolCall({ orchestrator: 'cron' }), 'schema'],
    ['call_id not a UUID', toolCall({ call_id: 'abc' }), 'schema'],
    ['missing tool_id', (() => { const p = toolCall(); delete (p.invocation as Record<string, unknown>).tool_id; return p; })(), 'schema'],
    ['timestamp without offset', toolCall({ created_at: '2026-11-22T10:00:00' }), 'schema'],
    ['impossible date', toolCall({ created_at: '2026-02-31T10:00:00Z' }), 'schema'],
    ['negative cost', toolCall({ cost_usd: -0.5 }), 'schema'],
    ['uppercase args_hash', toolCall({ args_hash: 'A'.repeat(64) }), 'schema'],
    ['envelope call_id differs', { ...tc, call_id: cid }, 'envelope_mismatch'],
    ['success with an error (I3)', toolCall({ error: 'oops' }), 'I3_error_on_success'],
    ['wrong args_hash (I5)', toolCall({ args_hash: sha('{}') }), 'I5_args_hash'],
    ['args_hash of unsorted keys (I5)', toolCall({ args: { b: 1, a: 2 }, args_hash: sha('{"b": 1, "a": 2}') }), 'I5_args_hash'],
    ['args_hash of compact JSON (I5)', toolCall({ args: { a: 1, b: 2 }, args_hash: sha('{"a":1,"b":2}') }), 'I5_args_hash'],
    ['dependency on itself (I6)', dependency({ preceding_call_id: cid, succeeding_call_id: cid }), 'I6_dependency'],
    ['dependency with zero delta (I6)', dependency({ time_delta_ms: 0 }), 'I6_dependency'],
    ['dependency with negative delta (I6)', dependency({ time_delta_ms: -5 }), 'I6_dependency'],
    ['output size mismatch (I7)', outputArtifact(cid, 'hello', 'text', { size_bytes: 6 }), 'I7_output_content'],
    ['output size of UTF-16 units, not bytes (I7)', outputArtifact(cid, 'é', 'text', { size_bytes: 1 }), 'I7_output_content'],
    ['output zero size (I7)', outputArtifact(cid, 'x', 'text', { size_bytes: 0 }), 'schema'],
    ['output empty content (I7)', outputArtifact(cid, '', 'text', { size_bytes: 1 }), 'I7_output_content'],
    ['output hash mismatch (I7)', outputArtifact(cid, 'hello', 'text', { content_hash: sha('other') }), 'I7_output_content'],
    ['output sample mismatch (I7)', outputArtifact(cid, 'hello', 'text', { sample: 'help' }), 'I7_output_content'],
    ['output json that does not parse (I7)', outputArtifact(cid, '{not json', 'json'), 'I7_output_content'],
    ['output chart id with spaces (I7)', outputArtifact(cid, 'my chart', 'chart_id'), 'I7_output_content'],
    ['output html without tags (I7)', outputArtifact(cid, 'just words', 'html'), 'I7_output_content'],
    ['output ragged csv (I7)', outputArtifact(cid, 'a,b\n1,2,3\n', 'csv'), 'I7_output_content'],
    ['output object content typed text (I7)', { ...outputArtifact(cid, '{}', 'text'), content: {} }, 'I7_output_content'],
  ])('%s', (_name, packet, expected) => {
    const r = decode(packet);
    expect(r.ok ? 'ok' : r.error.code).toBe(expected);
    if (!r.ok) expect(r.error.message.length).toBeGreaterThan(10);
  });

  it('rejects oversized packets before parsing them', () => {
    const r = decode(toolCall({ args: { blob: 'x'.repeat(2000) } }), 1000);
    expect(r.ok ? 'ok' : r.error.code).toBe('oversized');
  });

  it('names the offending unknown keys', () => {
    const r = decode(toolCall({ sneaky: 1 }));
    expect(!r.ok && r.error.message).toContain('sneaky');
  });
});

describe('fingerprints tell a redelivery from a reuse (I1)', () => {
  it('is the same for the same packet written with other key order, different for other content', () => {
    const p = toolCall();
    const reordered = JSON.stringify({ invocation: p.invocation, call_id: p.call_id, type: p.type });
    const a = decode(p);
    const b = decode(reordered);
    const c = decode({ ...p, invocation: { ...p.invocation, duration_ms: 121 } });
    if (!a.ok || !b.ok || !c.ok) throw new Error('expected valid packets');
    expect(a.value.row.fingerprint).toBe(b.value.row.fingerprint);
    expect(a.value.row.fingerprint).not.toBe(c.value.row.fingerprint);
  });
});

describe('created_at to ClickHouse text', () => {
  it('rearranges UTC millisecond timestamps exactly as going through Date does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) - 1 }), fc.integer({ min: -14 * 60, max: 14 * 60 }), (ms, offsetMin) => {
        const utc = new Date(ms).toISOString();
        expect(chCreatedAt(utc)).toBe(chTime(ms));
        // Other accepted forms (offsets, microseconds) take the Date path.
        const local = new Date(ms + offsetMin * 60_000).toISOString().replace('Z', `${offsetMin < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offsetMin) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMin) % 60).padStart(2, '0')}`);
        expect(chCreatedAt(local.replace(/\.(\d{3})/, '.$1456'))).toBe(chTime(ms));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('packets that are not UTF-8 text', () => {
  it('are rejected as they are, whatever the text of their base64 would say', () => {
    const valid = JSON.stringify(toolCall());
    const asBase64 = Buffer.from(valid).toString('base64');
    expect(decodeText(valid, undefined, 's', 1 << 20, 'utf8').ok).toBe(true);
    expect(decodeText(asBase64, undefined, 's', 1 << 20, 'base64')).toMatchObject({ ok: false, error: { code: 'invalid_utf8' } });
    expect(decodeText('', 0, 's', 1 << 20, 'none')).toMatchObject({ ok: false, error: { code: 'malformed_json', message: expect.stringContaining('no value') } });
    expect(decodePacket({ raw: valid, encoding: 'base64', source: { kind: 'http', requestId: 'r', index: 0 } }, 1 << 20)).toMatchObject({ ok: false, error: { code: 'invalid_utf8' } });
  });
});

describe('approvals (invocation.approval)', () => {
  const id = '3b241101-e2bb-4255-8caf-4136c566a962';
  const args = { amount: 12.5, to: 'ACME ü' };
  const call = (approval?: unknown) =>
    toolCall({ call_id: id, tool_id: 'wire_transfer', args, result_summary: { ok: true }, tokens_used: null, ...(approval === undefined ? {} : { approval }) });

  it('leaves the fingerprint of a call without one as it was before approvals existed', () => {
    // Taken from the decoder of the commit before approvals (34eac62), d6a6c34ce8681e8a2173b68848fc524e,
    // in the stored form of today (its first 16 digits; lookups bring stored ones to that form):
    // a redelivery of a call stored then must still be a duplicate, not an I1 reuse.
    const r = decode(call());
    const n = decode(call(null));
    expect(r.ok && r.value.row.fingerprint).toBe('d6a6c34ce8681e8a0000000000000000');
    expect(n.ok && n.value.row.fingerprint).toBe('d6a6c34ce8681e8a0000000000000000');
    expect(r.ok && r.value.kind === 'invocation' && r.value.row.approval).toBe('');
  });

  it('stores it with approved_at in UTC, and fingerprints it: another approval of the same call_id is another packet', () => {
    const a = decode(call({ approved_by: 'dana@ops', approved_at: '2026-11-22T11:59:00.5+02:00', reference: 'CHG-1 "ü"' }));
    const same = decode(call({ reference: 'CHG-1 "ü"', approved_at: '2026-11-22T09:59:00.500Z', approved_by: 'dana@ops' }));
    const other = decode(call({ approved_by: 'eve', approved_at: '2026-11-22T09:59:00.500Z' }));
    if (!a.ok || !same.ok || !other.ok || a.value.kind !== 'invocation' || other.value.kind !== 'invocation') throw new Error('expected valid packets');
    expect(JSON.parse(a.value.row.approval)).toEqual({ approved_by: 'dana@ops', approved_at: '2026-11-22T09:59:00.500Z', reference: 'CHG-1 "ü"' });
    expect(JSON.parse(other.value.row.approval)).toEqual({ approved_by: 'eve', approved_at: '2026-11-22T09:59:00.500Z' });
    expect(a.value.row.fingerprint).toBe(same.value.row.fingerprint);
    expect(a.value.row.fingerprint).not.toBe(other.value.row.fingerprint);
    expect(a.value.row.fingerprint).not.toBe('d6a6c34ce8681e8a0000000000000000');
  });

  it.each([
    [{ approved_by: '', approved_at: '2026-11-22T10:00:00Z' }, 'invocation.approval.approved_by'],
    [{ approved_by: 'x', approved_at: '2026-11-22 10:00:00' }, 'invocation.approval.approved_at'],
    [{ approved_by: 'x' }, 'invocation.approval.approved_at'],
    [{ approved_by: 'x', approved_at: '2026-11-22T10:00:00Z', by_whom: 1 }, 'invocation.approval'],
    [{ approved_by: 'x', approved_at: '2026-11-22T10:00:00Z', reference: '' }, 'invocation.approval.reference'],
    ['yes', 'invocation.approval'],
  ])('refuses a malformed approval %j, naming %s', (approval, path) => {
    const r = decode(call(approval));
    expect(!r.ok && r.error.code).toBe('schema');
    expect(!r.ok && r.error.message).toContain(`${path}:`);
  });
});
