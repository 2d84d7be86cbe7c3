/**
 * A LangChain.js tool traced by OpenInference's own instrumentation
 * (@arizeai/openinference-instrumentation-langchain), unmodified, exported by the OpenTelemetry JS
 * SDK over OTLP/HTTP protobuf to POST /v1/traces: the call is stored once with its tool, its
 * arguments as the tool received them and its output; the chain span around it is not a call; a
 * re-export stores nothing new. Oracles: the arguments and return value the test wrote, CPython's
 * json.dumps(sort_keys=True) for args_hash.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { tool } from '@langchain/core/tools';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { count, rows } from '../../helpers/clickhouse.ts';
import { startOtlpApp, type OtlpApp } from '../../helpers/otlp-app.ts';

let otlp: OtlpApp;
beforeAll(async () => {
  otlp = await startOtlpApp('lcjs');
});
afterAll(async () => otlp.close());

const pythonCanonical = (args: unknown): string => {
  const r = spawnSync('python3', ['-c', 'import json,sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read()), sort_keys=True))'], { input: JSON.stringify(args), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
};

describe('LangChain.js under OpenInference', () => {
  it('stores the tool call once, with its arguments as the tool got them and its output', async () => {
    const task = `lcjs-${Date.now()}`;
    const kept = new InMemorySpanExporter();
    const exporter = new OTLPTraceExporter({ url: otlp.url, headers: { authorization: `Bearer ${otlp.key}` } });
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'kernel', 'tool_audit.task_id': task }),
      spanProcessors: [new SimpleSpanProcessor(exporter), new SimpleSpanProcessor(kept)],
    });
    const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
    instrumentation.manuallyInstrument(CallbackManagerModule);

    const searchDocs = tool(async ({ query, k }: { query: string; k: number }) => `found ${k} pages for ${query}`, {
      name: 'search_docs',
      description: 'Searches the docs.',
      schema: z.object({ query: z.string(), k: z.number() }),
    });
    const args = { query: 'refund policy 🚀', k: 2 };
    expect(await searchDocs.invoke(args)).toBe('found 2 pages for refund policy 🚀');
    await provider.forceFlush();
    const spans = kept.getFinishedSpans();
    expect(spans.some((s) => s.attributes['openinference.span.kind'] === 'TOOL')).toBe(true);

    const stored = await rows<{ call_id: string; tool_id: string; args: string; args_hash: string; status: string }>(otlp.ch, 'SELECT toString(call_id) AS call_id, tool_id, args, args_hash, toString(status) AS status FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String}', { db: otlp.db, t: task });
    const canonical = pythonCanonical(args);
    expect(stored.map((r) => [r.tool_id, r.args, r.args_hash, r.status])).toEqual([['search_docs', canonical, createHash('sha256').update(canonical).digest('hex'), 'success']]);
    const [output] = await rows<{ sample: string }>(otlp.ch, 'SELECT sample FROM {db:Identifier}.tool_outputs WHERE call_id = {c:UUID}', { db: otlp.db, c: stored[0]!.call_id });
    expect(output?.sample).toContain('found 2 pages for refund policy 🚀');

    // The same spans exported again: nothing new, nothing quarantined.
    await new Promise<void>((resolve, reject) => exporter.export(spans, (r) => (r.code === 0 ? resolve() : reject(r.error ?? new Error('export failed')))));
    expect(await count(otlp.ch, otlp.db, 'tool_invocations', `task_id = '${task}'`)).toBe(1);
    expect(await count(otlp.ch, otlp.db, 'quarantine')).toBe(0);
    await provider.shutdown();
  });
});
