/**
 * invoke when the tool fails: error envelopes of every category, exceptions and timeouts;
 * every packet goes through the ingest validator (see harness.ts).
 */
import { describe, expect, it } from 'vitest';
import { EmitterTimeoutError } from '../../../emit/index.ts';
import { sent, setup } from './harness.ts';

describe('failures', () => {
  it.each([
    ['validation_error', 'invalid_input'],
    ['rate_limit', 'rate_limited'],
    ['timeout', 'timeout'],
    ['auth_error', 'error'],
    ['not_found', 'error'],
    ['server_error', 'error'],
    ['something_new', 'error'],
  ])('error envelope %s → status %s, returned unchanged, no output', async (category, status) => {
    const { emitter, transport } = setup();
    const envelope = { status: 'error' as const, error_category: category, message: `failed: ${category}`, retryable: false, metadata: { attempt: 1 } };
    expect(await emitter.invoke('recipe_get', { id: 'x' }, async () => envelope)).toBe(envelope);
    const { packets, calls } = await sent(emitter, transport);
    expect(packets.map((p) => p.type)).toEqual(['tool_call']);
    expect(calls[0]).toMatchObject({ status, error: `failed: ${category}`, result_summary: { attempt: 1, error_category: category, retryable: false } });
  });

  it('an envelope without a message still records a non-null error', async () => {
    const { emitter, transport } = setup();
    await emitter.invoke('t', {}, async () => ({ status: 'error', error_category: 'not_found' }));
    const { calls } = await sent(emitter, transport);
    expect(calls[0]).toMatchObject({ status: 'error', error: 'not_found' });
  });

  it('a rejected promise: status error with the message, the same error rethrown', async () => {
    const { emitter, transport } = setup();
    const boom = new TypeError('connection reset');
    await expect(emitter.invoke('fetch_url', { url: 'https://x' }, async () => Promise.reject(boom))).rejects.toBe(boom);
    const { packets, calls } = await sent(emitter, transport);
    expect(packets.map((p) => p.type)).toEqual(['tool_call']);
    expect(calls[0]).toMatchObject({ status: 'error', error: 'connection reset' });
  });

  it('a synchronous throw becomes a rejection with the same value, recorded as error', async () => {
    const { emitter, transport } = setup();
    const thrown = { code: 42 };
    await expect(
      emitter.invoke('t', {}, () => {
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    const { calls } = await sent(emitter, transport);
    expect(calls[0]).toMatchObject({ status: 'error', error: '{"code":42}' });
  });

  it('an error message longer than the schema allows is cut, not quarantined', async () => {
    const { emitter, transport } = setup();
    await expect(emitter.invoke('t', {}, async () => Promise.reject(new Error('x'.repeat(70_000))))).rejects.toThrow();
    const { calls } = await sent(emitter, transport);
    expect(calls[0]?.error).toHaveLength(65_536);
  });

  it('timeout: status timeout, duration about the timeout, EmitterTimeoutError, signal aborted, the late result ignored', async () => {
    const { emitter, transport } = setup();
    let signal: AbortSignal | undefined;
    let finish: (v: string) => void = () => {};
    const started = performance.now();
    const call = emitter.invoke(
      'python_execute',
      { code: 'while True: pass' },
      (ctx) => {
        signal = ctx.signal;
        return new Promise<string>((resolve) => (finish = resolve));
      },
      { taskId: 'task-9', timeoutMs: 80 },
    );
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmitterTimeoutError);
    expect(err).toMatchObject({ toolId: 'python_execute', timeoutMs: 80, message: 'python_execute timed out after 80 ms' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(signal?.aborted).toBe(true);
    finish('too late');
    await new Promise((r) => setTimeout(r, 10));
    const { packets, calls } = await sent(emitter, transport);
    expect(packets.map((p) => p.type)).toEqual(['tool_call']);
    expect(calls[0]).toMatchObject({ status: 'timeout', error: 'python_execute timed out after 80 ms', call_id: (err as EmitterTimeoutError).callId });
    expect(calls[0]?.duration_ms).toBeGreaterThanOrEqual(79);
    expect(calls[0]?.duration_ms).toBeLessThan(500);
  });

  it('a tool that settles before its timeout is recorded normally', async () => {
    const { emitter, transport } = setup();
    await expect(emitter.invoke('t', {}, async () => 'ok', { timeoutMs: 1000 })).resolves.toBe('ok');
    const boom = new Error('bad');
    await expect(emitter.invoke('t', {}, async () => Promise.reject(boom), { timeoutMs: 1000 })).rejects.toBe(boom);
    const { calls } = await sent(emitter, transport);
    expect(calls.map((c) => c.status)).toEqual(['success', 'error']);
  });
});
