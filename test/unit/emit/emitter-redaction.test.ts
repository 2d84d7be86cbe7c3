/**
 * The TypeScript emitter takes secrets out before a packet leaves the process: args,
 * result summary, error and content carry placeholders computed here with HMAC-SHA-256 under the
 * test's key, args_hash is the SHA-256 of what is sent (ingest accepts every packet: sent() judges
 * them with its decoder), and a call with no secret is sent exactly as without redaction.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditResult, createAuditEmitter, createMemoryTransport } from '../../../emit/index.ts';
import { canonicalArgs } from '../../../schemas/canonical-json.ts';
import { sent, sha } from './harness.ts';

const KEY = 'emitter-redaction-key-0123';
const mark = (rule: string, secret: string) => `[redacted:${rule}:${createHmac('sha256', KEY).update(secret).digest('hex').slice(0, 16)}]`;
const AWS = 'AKIAIOSFODNN7EXAMPLE';
const CARD = '5555-5555-5555-4444';

function setup() {
  const transport = createMemoryTransport();
  const emitter = createAuditEmitter({ transport, orchestrator: 'kernel', agentId: 'L', buffer: { lingerMs: 1 }, redaction: { key: KEY, paths: { pay: ['args.cvc'] } } });
  return { transport, emitter };
}

describe('emitter redaction', () => {
  it('sends placeholders, never the secrets, with args_hash of what is sent', async () => {
    const { emitter, transport } = setup();
    await emitter.invoke('pay', { card: CARD, cvc: 123, note: 'ok' }, async () => auditResult({ receipt: 'ok' }, { resultSummary: { key: AWS }, content: { card: CARD } }));
    await emitter.invoke('deploy', { env: 'prod' }, async () => {
      throw new Error(`denied for ${AWS}`);
    }).catch(() => undefined);
    const { calls, outputs, packets } = await sent(emitter, transport);
    const args = { card: mark('card_number', CARD), cvc: mark('path', '123'), note: 'ok' };
    expect(calls[0]?.args).toEqual(args);
    expect(calls[0]?.args_hash).toBe(sha(canonicalArgs(args)));
    expect(calls[0]?.result_summary).toEqual({ key: mark('aws_access_key', AWS) });
    expect(calls[1]?.args).toEqual({ env: 'prod' });
    expect(calls[1]?.args_hash).toBe(sha(canonicalArgs({ env: 'prod' })));
    expect(calls[1]?.error).toContain(`denied for ${mark('aws_access_key', AWS)}`);
    const content = `{"card":"${mark('card_number', CARD)}"}`;
    expect(outputs[0]?.content).toEqual(JSON.parse(content));
    expect(outputs[0]?.content_hash).toBe(sha(content));
    const wire = JSON.stringify(packets);
    expect(wire).not.toContain(AWS);
    expect(wire).not.toContain(CARD);
    expect(wire).not.toContain('"cvc":123');
  });

  it('refuses a key shorter than 16 characters at once', () => {
    expect(() => createAuditEmitter({ transport: createMemoryTransport(), orchestrator: 'kernel', agentId: 'L', redaction: { key: 'short' } })).toThrow(/at least 16 characters/);
  });
});
