/**
 * invoke on success, and what it records about args, keys and identity; every packet goes
 * through the ingest validator (see harness.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { auditResult, createAuditEmitter, createMemoryTransport } from '../../../emit/index.ts';
import { ISO_MS, sent, setup, sha, UUID } from './harness.ts';

describe('success', () => {
  it('string content: one tool_call and one text output_artifact, both valid', async () => {
    const { emitter, transport } = setup();
    const value = await emitter.invoke('search_web', { query: 'revenue' }, async () => 'three results', { taskId: 'task-1' });
    expect(value).toBe('three results');
    const { calls, outputs, packets } = await sent(emitter, transport);
    expect(packets.map((p) => p.type)).toEqual(['tool_call', 'output_artifact']);
    const [call] = calls;
    expect(call).toMatchObject({ task_id: 'task-1', tool_id: 'search_web', agent_id: 'L', orchestrator: 'kernel', instance_id: 'kernel' });
    expect(call).toMatchObject({ status: 'success', error: null, result_summary: {}, cost_usd: null, tokens_used: null });
    expect(call?.call_id).toMatch(UUID);
    expect(call?.created_at).toMatch(ISO_MS);
    expect(Number.isInteger(call?.duration_ms)).toBe(true);
    expect(call?.args_hash).toBe(sha('{"query": "revenue"}'));
    expect(outputs).toEqual([
      {
        output_id: expect.stringMatching(UUID),
        call_id: call?.call_id,
        tool_id: 'search_web',
        content_type: 'text',
        content_hash: sha('three results'),
        size_bytes: 13,
        sample: 'three results',
        created_at: call?.created_at,
        content: 'three results',
      },
    ]);
  });

  it('object content: sent as the JSON value, content_type json, hashed as compact JSON', async () => {
    const { emitter, transport } = setup();
    const rows = { rows: [{ id: 1, city: 'Zürich' }], total: 1 };
    expect(await emitter.invoke('sql_execute', { sql: 'SELECT 1' }, async () => rows)).toBe(rows);
    const { outputs } = await sent(emitter, transport);
    const text = '{"rows":[{"id":1,"city":"Zürich"}],"total":1}';
    expect(outputs).toMatchObject([{ content_type: 'json', content: rows, content_hash: sha(text), size_bytes: Buffer.byteLength(text), sample: text }]);
  });

  it('success envelope: result is the content, metadata the result_summary; the envelope is returned', async () => {
    const { emitter, transport } = setup();
    const envelope = { status: 'success' as const, result: [{ name: 'marsala' }], metadata: { total_count: 1, source: 'recipe_db' } };
    expect(await emitter.invoke('recipe_search', { q: 'chicken' }, async () => envelope)).toBe(envelope);
    const { calls, outputs } = await sent(emitter, transport);
    expect(calls[0]?.result_summary).toEqual({ total_count: 1, source: 'recipe_db' });
    expect(outputs).toMatchObject([{ content: [{ name: 'marsala' }], content_type: 'json', content_hash: sha('[{"name":"marsala"}]') }]);
  });

  it('auditResult: explicit content, content type, summary, cost and tokens; invoke returns the bare value', async () => {
    const { emitter, transport } = setup();
    const csv = 'ticker,close\nAAPL,1.5\nMSFT,"2,5"\n';
    const value = await emitter.invoke('finance_quotes', { tickers: ['AAPL'] }, async () =>
      auditResult({ parsed: 2 }, { content: csv, contentType: 'csv', resultSummary: { rows: 2 }, costUsd: 1.25, tokensUsed: { input_tokens: 10, output_tokens: 2.5 } }),
    );
    expect(value).toEqual({ parsed: 2 });
    const { calls, outputs } = await sent(emitter, transport);
    expect(calls[0]).toMatchObject({ result_summary: { rows: 2 }, cost_usd: 1.25, tokens_used: { input_tokens: 10 } });
    expect(outputs).toMatchObject([{ content: csv, content_type: 'csv', content_hash: sha(csv) }]);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an empty string', ''],
    ['auditResult with content null', auditResult('big', { content: null })],
  ])('no output_artifact for %s', async (_name, result) => {
    const { emitter, transport } = setup();
    await emitter.invoke('noop', {}, () => result);
    const { packets, calls } = await sent(emitter, transport);
    expect(packets.map((p) => p.type)).toEqual(['tool_call']);
    expect(calls[0]?.status).toBe('success');
  });

  it('a synchronous tool is recorded too', async () => {
    const { emitter, transport } = setup();
    expect(await emitter.invoke('add', { a: 1, b: 2 }, () => 3)).toBe(3);
    const { outputs } = await sent(emitter, transport);
    expect(outputs).toMatchObject([{ content: '3', content_type: 'json' }]);
  });

  it('content over 500 characters: sample is the first 500 code points', async () => {
    const { emitter, transport } = setup();
    const text = '🚀'.repeat(700);
    await emitter.invoke('gen', {}, async () => text);
    const { outputs } = await sent(emitter, transport);
    expect(outputs[0]?.sample).toBe('🚀'.repeat(500));
    expect(outputs[0]?.size_bytes).toBe(2800);
  });
});

describe('approval', () => {
  it('invoke sends the approval given (a Date, epoch ms or an offset string) in UTC; a malformed one rejects before the tool runs', async () => {
    const { emitter, transport } = setup();
    const at = Date.UTC(2026, 10, 22, 9, 30, 0, 5);
    await emitter.invoke('wire', { n: 1 }, () => 'ok', { approval: { approvedBy: 'dana', approvedAt: new Date(at) } });
    await emitter.invoke('wire', { n: 2 }, () => 'ok', { approval: { approvedBy: 'dana', approvedAt: at, reference: 'https://tickets.example/CHG-9' } });
    await emitter.invoke('wire', { n: 3 }, () => 'ok', { approval: { approvedBy: 'dana', approvedAt: '2026-11-22T04:30:00.005-05:00' } });
    let ran = false;
    const bad = [{ approvedBy: '', approvedAt: at }, { approvedBy: 'x', approvedAt: '2026-11-22 09:30' }, { approvedBy: 'x', approvedAt: Number.NaN }, { approvedBy: 'x', approvedAt: at, reference: '' }];
    for (const approval of bad) {
      await expect(emitter.invoke('wire', {}, () => (ran = true), { approval })).rejects.toThrow(TypeError);
    }
    expect(ran).toBe(false);
    const { calls } = await sent(emitter, transport);
    const iso = '2026-11-22T09:30:00.005Z';
    expect(calls.map((c) => (c as { approval?: unknown }).approval)).toEqual([
      { approved_by: 'dana', approved_at: iso },
      { approved_by: 'dana', approved_at: iso, reference: 'https://tickets.example/CHG-9' },
      { approved_by: 'dana', approved_at: iso },
    ]);
  });
});

describe('args', () => {
  const vectors = readFileSync(new URL('../../fixtures/args_hash.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { args: Record<string, unknown>; args_hash: string });

  it('args_hash matches every CPython vector (non-ASCII, nested, SQL, code, control characters)', async () => {
    const { emitter, transport } = setup();
    for (const v of vectors) await emitter.invoke('t', v.args, async () => 'ok');
    const { calls } = await sent(emitter, transport);
    expect(calls.map((c) => c.args_hash)).toEqual(vectors.map((v) => v.args_hash));
    expect(calls.map((c) => c.args)).toEqual(vectors.map((v) => v.args));
  });

  it('records args as they were when invoke was called, even if the tool mutates them', async () => {
    const { emitter, transport } = setup();
    const args = { page: 1, tags: ['a'] };
    await emitter.invoke('t', args, async () => {
      args.page = 2;
      args.tags.push('b');
      return 'ok';
    });
    const { calls } = await sent(emitter, transport);
    expect(calls[0]?.args).toEqual({ page: 1, tags: ['a'] });
    expect(calls[0]?.args_hash).toBe(sha('{"page": 1, "tags": ["a"]}'));
  });

  it('args JSON cannot represent (BigInt, cycles, undefined) still give a valid packet', async () => {
    const { emitter, transport } = setup();
    const cyclic: Record<string, unknown> = { n: 10n, skip: undefined };
    cyclic.self = cyclic;
    await emitter.invoke('t', cyclic, async () => 'ok');
    const { calls } = await sent(emitter, transport);
    expect(calls[0]?.args).toEqual({ n: '10', self: '[Circular]' });
  });
});

describe('keys, identity and counts', () => {
  it('keys by task_id, or by call_id when there is no task', async () => {
    const { emitter, transport } = setup();
    await emitter.invoke('t', {}, async () => 'a', { taskId: 'task-7' });
    await emitter.invoke('t', {}, async () => 'b');
    await emitter.invoke('t', {}, async () => 'c', { taskId: '' });
    const { messages, calls } = await sent(emitter, transport);
    expect(messages.map((m) => m.key)).toEqual(['task-7', 'task-7', calls[1]?.call_id, calls[1]?.call_id, calls[2]?.call_id, calls[2]?.call_id]);
    expect(calls.map((c) => c.task_id)).toEqual(['task-7', null, null]);
  });

  it('instance_id and a per-call agent_id', async () => {
    const { emitter, transport } = setup({ instanceId: 'kernel-7' });
    await emitter.invoke('t', {}, async () => 'ok', { agentId: 'QA_Agent' });
    const { calls } = await sent(emitter, transport);
    expect(calls[0]).toMatchObject({ instance_id: 'kernel-7', agent_id: 'QA_Agent' });
  });

  it('exactly one tool_call per invoke and one output per successful call with content, over a mixed run', async () => {
    const { emitter, transport } = setup();
    const runs: Array<() => unknown> = [
      () => 'text',
      () => ({ a: 1 }),
      () => undefined,
      () => ({ status: 'error', error_category: 'rate_limit', message: 'slow down' }),
      () => Promise.reject(new Error('x')),
    ];
    const n = 100;
    await Promise.allSettled(Array.from({ length: n }, (_, i) => emitter.invoke(`tool_${i % 5}`, { i }, runs[i % 5] as () => unknown, { taskId: `task-${i % 3}` })));
    const { calls, outputs } = await sent(emitter, transport);
    expect(calls).toHaveLength(n);
    expect(new Set(calls.map((c) => c.call_id)).size).toBe(n);
    expect(outputs).toHaveLength(40);
    const byId = new Map(calls.map((c) => [c.call_id, c]));
    for (const o of outputs) expect(byId.get(o.call_id)?.status).toBe('success');
    expect(emitter.stats()).toEqual({ enqueued: 140, delivered: 140, rejected: 0, dropped: 0, failedBatches: 0, buffered: 0 });
  });

  it('created_at never goes backwards in emission order', async () => {
    const { emitter, transport } = setup();
    await Promise.all(Array.from({ length: 20 }, (_, i) => emitter.invoke('t', {}, () => new Promise((r) => setTimeout(() => r('x'), (i * 7) % 13)))));
    const { calls } = await sent(emitter, transport);
    const times = calls.map((c) => Date.parse(c.created_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});

describe('options', () => {
  it('needs exactly one sink and valid names', () => {
    expect(() => createAuditEmitter({ orchestrator: 'kernel', agentId: 'L' })).toThrow(/exactly one/);
    const transport = createMemoryTransport();
    expect(() => createAuditEmitter({ transport, http: { url: 'http://x' }, orchestrator: 'kernel', agentId: 'L' })).toThrow(/exactly one/);
    expect(() => createAuditEmitter({ transport, orchestrator: 'cron' as 'kernel', agentId: 'L' })).toThrow();
    expect(() => createAuditEmitter({ transport, orchestrator: 'kernel', agentId: '' })).toThrow();
  });
});
