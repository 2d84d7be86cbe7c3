/**
 * Tool spans as agent frameworks' own instrumentations export them, unmodified, over OTLP/HTTP
 * (protobuf) to `tool-audit serve`: a LangChain tool traced by OpenInference
 * (openinference-instrumentation-langchain, Arize Phoenix's conventions) and by OpenLLMetry
 * (opentelemetry-instrumentation-langchain, Traceloop's), and a pydantic-ai agent on its test
 * model (OTel GenAI conventions), and an MCP call whose client and server both export the MCP
 * SDK's own spans (OTel MCP conventions). Each call is stored once with its tool, its
 * arguments as the tool received them and its output; each agent run once, naming the task.
 * Oracles: the arguments the script passed, the names the script gave its agents,
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
import { seedDataDir } from '../../helpers/data-template.ts';
import type { TaskView } from '../../../schemas/answers.ts';

const SCRIPT = `
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
dialect, url, task = sys.argv[1:4]
provider = TracerProvider(resource=Resource.create({"service.name": "kernel", "tool_audit.task_id": task}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
kept = InMemorySpanExporter()
provider.add_span_processor(SimpleSpanProcessor(kept))

def done():
    # The same spans exported once more, as an exporter retrying after a lost answer would.
    provider.force_flush()
    OTLPSpanExporter(endpoint=url + "/v1/traces").export(kept.get_finished_spans())
    sys.exit(0)

if dialect == "pydantic-ai":
    # An agent on pydantic-ai's test model (no network): it calls the tool with arguments it makes up.
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    agent = Agent(TestModel(), name="weather_bot")

    @agent.tool_plain
    def lookup(key: str) -> str:
        """Looks a key up."""
        return f"value of {key}"

    # The prompt carries a secret: the turn's stored messages must not.
    result = agent.run_sync("look up k1 with sk-ant-api03-a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5-ABCDEFGH")
    print(result.output)
    # The model turns as pydantic-ai itself counts them: the oracle of the stored turns.
    import json
    turns = [{"input_tokens": m.usage.input_tokens, "output_tokens": m.usage.output_tokens, "asked": [p.tool_call_id for p in m.parts if p.part_kind == "tool-call"]} for m in result.all_messages() if m.kind == "response"]
    print("TURNS " + json.dumps(turns))
    done()
if dialect == "mcp":
    # The MCP SDK's own spans: the client's (kind CLIENT) here, the server's (kind SERVER, a child
    # of the client's through _meta) in the server process, which exports them itself.
    import asyncio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    trace.set_tracer_provider(provider)

    async def call():
        server = StdioServerParameters(command=sys.executable, args=["-c", sys.argv[4], url, task])
        async with stdio_client(server) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                print((await session.call_tool("get_weather", {"city": "Oslo", "days": 2})).content[0].text)

    asyncio.run(call())
    done()
from langchain_core.tools import tool
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

# The tool called from a runnable named as an agent: the trace's root, the task's agent run.
from langchain_core.runnables import RunnableLambda
support_agent = RunnableLambda(lambda q: search_docs.invoke({"query": q, "k": 2})).with_config(run_name="support_agent")
print(support_agent.invoke("refund policy"))
done()
`;

/** An MCP server (the SDK's MCPServer over stdio) exporting its own spans to the same place. */
const MCP_SERVER = `
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
url, task = sys.argv[1:3]
provider = TracerProvider(resource=Resource.create({"service.name": "weather-server", "tool_audit.task_id": task}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
trace.set_tracer_provider(provider)
from mcp.server.mcpserver import MCPServer
server = MCPServer("weather")

@server.tool()
def get_weather(city: str, days: int = 1) -> str:
    """Forecast."""
    return f"sunny in {city} for {days} days"

server.run("stdio")
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
  it('stores a LangChain tool call traced by OpenInference and by OpenLLMetry, a pydantic-ai agent\'s, and an MCP call traced by both its sides once, arguments as the tool got them, each agent run once naming its task; a re-export stores nothing', async () => {
    const port = testPort();
    const url = `http://127.0.0.1:${port}`;
    // Turns keep their messages here (OTLP_TURN_MESSAGES=on), redacted.
    const env: Record<string, string | undefined> = { ...process.env, OTLP_TURN_MESSAGES: 'on', PORT: String(port), TOOL_AUDIT_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'tool-audit-dialects-')), 'data'), LOG_LEVEL: 'warn' };
    delete env.KAFKA_BROKERS;
    delete env.CLICKHOUSE_URL;
    await seedDataDir(env.TOOL_AUDIT_DATA_DIR as string);
    delete env.TOOL_AUDIT_API_KEYS;
    const serve = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => serve.on('exit', resolve));
    try {
      await until('serve', async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 60_000);
      const runs = [
        { dialect: 'openinference', tool: 'search_docs', args: { query: 'refund policy', k: 2 }, output: 'found 2 pages for refund policy', run: ['support_agent', 'support_agent'] },
        { dialect: 'openllmetry', tool: 'search_docs', args: { query: 'refund policy', k: 2 }, output: 'found 2 pages for refund policy', run: ['support_agent', 'support_agent'] },
        // pydantic-ai's test model passes 'a' for a string parameter.
        { dialect: 'pydantic-ai', tool: 'lookup', args: { key: 'a' }, output: 'value of a', run: ['invoke_agent weather_bot', 'weather_bot'] },
        // The MCP SDK records no arguments or result (the conventions make them opt-in): one call, not two.
        { dialect: 'mcp', tool: 'get_weather', args: {}, output: undefined, run: undefined },
      ];
      for (const { dialect, tool, args, output, run } of runs) {
        const [hash] = pythonArgsHashes([args]);
        const task = `${dialect}-${randomUUID()}`;
        const printed = execFileSync(python(), ['-c', SCRIPT, dialect, url, task, MCP_SERVER], { encoding: 'utf8' });
        expect(printed).toContain(output ?? 'sunny in Oslo for 2 days');
        const view = await until(`the call of ${task}`, async () => {
          const v = (await (await fetch(`${url}/v1/tasks/${task}`)).json()) as TaskView;
          // The run ends after its calls: wait for it too.
          return v.invocations.length && (!run || v.agent_runs.length) ? v : undefined;
        });
        // One run (the re-export stored nothing more) naming the task; none where no agent ran.
        expect([view.name, view.agent_id, view.agent_runs.map((r) => [r.name, r.agent_id, r.status, r.parent_span_id])], dialect).toEqual(
          run ? [run[0], run[1], [[run[0], run[1], 'success', null]]] : [null, null, []],
        );
        expect(view.invocations.map((c) => [c.tool_id, c.args, c.args_hash, c.status]), dialect).toEqual([[tool, args, hash, 'success']]);
        if (output) expect(JSON.stringify(view), dialect).toContain(output);
        // Of the MCP call's two spans, the client's is the call (the server's continues its trace).
        if (dialect === 'mcp') expect((view.invocations[0]?.result_summary as { mcp?: unknown } | undefined)?.mcp).toEqual({ side: 'client', request_id: '2' });
        if (dialect === 'pydantic-ai') {
          // Its two model turns, with their tokens; the first asked for the call that was made.
          const oracle = JSON.parse(/^TURNS (.*)$/m.exec(printed)?.[1] ?? 'null') as Array<{ input_tokens: number; output_tokens: number; asked: string[] }>;
          expect(oracle).toHaveLength(2);
          const callId = view.invocations[0]?.call_id;
          expect(view.model_turns.map((t) => ({ model: t.model, provider: t.provider, input_tokens: t.input_tokens, output_tokens: t.output_tokens, asked: t.requested_tool_calls.map((q) => [q.id, q.tool_id, q.call_id]) }))).toEqual(
            oracle.map((o) => ({ model: 'test', provider: 'test', input_tokens: o.input_tokens, output_tokens: o.output_tokens, asked: o.asked.map((id) => [id, 'lookup', callId]) })),
          );
          // The first turn's messages: the prompt as pydantic-ai sent it, its secret redacted.
          const told = JSON.parse(view.model_turns[0]?.messages ?? 'null') as Record<string, string> | null;
          expect(Object.keys(told ?? {})).toContain('gen_ai.input.messages');
          expect(told?.['gen_ai.input.messages']).toContain('look up k1 with [redacted:');
          expect(JSON.stringify(view)).not.toContain('sk-ant-api03-');
        }
      }
      // Every span was exported twice: the second time stored nothing, and nothing conflicted.
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).not.toMatch(/tool_audit_otlp_spans_total\{outcome="rejected"\} [1-9]/);
      expect(Number(/tool_audit_otlp_spans_total\{outcome="accepted"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);
    } finally {
      serve.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});
