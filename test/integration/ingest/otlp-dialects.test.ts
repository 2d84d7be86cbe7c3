/**
 * Tool spans as agent frameworks' own instrumentations export them, unmodified, over OTLP/HTTP
 * (protobuf) to `tool-audit serve`: a LangChain tool traced by OpenInference
 * (openinference-instrumentation-langchain, Arize Phoenix's conventions) and by OpenLLMetry
 * (opentelemetry-instrumentation-langchain, Traceloop's), and a pydantic-ai agent on its test
 * model (OTel GenAI conventions). Each call is stored with its tool, its
 * arguments as the tool received them and its output. Oracles: the arguments the script passed,
 * CPython's own sha256(json.dumps(args, sort_keys=True)) for args_hash, the tool's return value.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { python, pythonArgsHashes, root } from '../../helpers/mcp.ts';
import { testPort } from '../../helpers/ports.ts';

const SCRIPT = `
import sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from langchain_core.tools import tool
dialect, url, task = sys.argv[1:4]
provider = TracerProvider(resource=Resource.create({"service.name": "kernel", "tool_audit.task_id": task}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
if dialect == "pydantic-ai":
    # An agent on pydantic-ai's test model (no network): it calls the tool with arguments it makes up.
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    agent = Agent(TestModel())

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Looks a key up."""
        return f"value of {key}"

    print(agent.run_sync("look up k1").output)
    provider.force_flush()
    sys.exit(0)
if dialect == "openinference":
    from openinference.instrumentation.langchain import LangChainInstrumentor
    LangChainInstrumentor().instrument(tracer_provider=provider)
else:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor
    LangchainInstrumentor().instrument(tracer_provider=provider)

@tool
def search_docs(query: str, k: int = 3) -> str:
    """Searches the docs."""
    return f"found {k} pages for {query}"

print(search_docs.invoke({"query": "refund policy", "k": 2}))
provider.force_flush()
`;

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('tool spans of agent frameworks, as their instrumentations export them', () => {
  it('stores a LangChain tool call traced by OpenInference and by OpenLLMetry, and a pydantic-ai agent\'s, arguments as the tool got them', async () => {
    const port = testPort();
    const url = `http://127.0.0.1:${port}`;
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'tool-audit-dialects-')), 'data'), LOG_LEVEL: 'warn' };
    delete env.KAFKA_BROKERS;
    delete env.CLICKHOUSE_URL;
    delete env.TOOL_AUDIT_API_KEYS;
    const serve = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => serve.on('exit', resolve));
    try {
      await until('serve', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 60_000);
      const runs = [
        { dialect: 'openinference', tool: 'search_docs', args: { query: 'refund policy', k: 2 }, output: 'found 2 pages for refund policy' },
        { dialect: 'openllmetry', tool: 'search_docs', args: { query: 'refund policy', k: 2 }, output: 'found 2 pages for refund policy' },
        // pydantic-ai's test model passes 'a' for a string parameter.
        { dialect: 'pydantic-ai', tool: 'lookup', args: { key: 'a' }, output: 'value of a' },
      ];
      for (const { dialect, tool, args, output } of runs) {
        const [hash] = pythonArgsHashes([args]);
        const task = `${dialect}-${randomUUID()}`;
        expect(execFileSync(python(), ['-c', SCRIPT, dialect, url, task], { encoding: 'utf8' })).toContain(output);
        const view = await until(`the call of ${task}`, async () => {
          const v = (await (await fetch(`${url}/v1/tasks/${task}`)).json()) as { invocations?: Array<{ tool_id: string; args: unknown; args_hash: string; status: string; call_id: string }>; outputs?: unknown[] };
          return v.invocations?.length ? v : undefined;
        });
        expect(view.invocations?.map((c) => [c.tool_id, c.args, c.args_hash, c.status]), dialect).toEqual([[tool, args, hash, 'success']]);
        expect(JSON.stringify(view), dialect).toContain(output);
      }
    } finally {
      serve.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});
