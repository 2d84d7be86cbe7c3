/**
 * An MCP client traced by OpenLLMetry's own MCP instrumentation (opentelemetry-instrumentation-mcp,
 * unmodified), calling a FastMCP server over stdio and exporting with the OpenTelemetry Python SDK
 * over OTLP/HTTP protobuf to POST /v1/traces: the call is stored once with its arguments as sent
 * and its result; the instrumentation's other spans (initialize, tools/list, stream writers) are
 * not calls; a re-export stores nothing. The instrumentation wraps the MCP SDK of before 2.0, so it
 * runs in a virtual environment of its own (.services/venv-mcp1, made once). Oracles: the
 * arguments the script sent, CPython's json.dumps(sort_keys=True) for args_hash, the tool's text.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { count, rows } from '../../helpers/clickhouse.ts';
import { startOtlpApp, type OtlpApp } from '../../helpers/otlp-app.ts';
import { root } from '../../helpers/mcp.ts';

const REQUIREMENTS = ['mcp>=1.25,<2', 'opentelemetry-instrumentation-mcp==0.62.4', 'opentelemetry-sdk>=1.38,<2', 'opentelemetry-exporter-otlp-proto-http>=1.38,<2'];
const VENV = join(root, '.services/venv-mcp1');

/** The venv of the instrumentation, made when missing or made for other requirements. */
function venvPython(): string {
  const stamp = join(VENV, `.installed-${createHash('sha256').update(REQUIREMENTS.join('\n')).digest('hex').slice(0, 16)}`);
  const python = join(VENV, 'bin/python');
  if (!existsSync(stamp)) {
    mkdirSync(join(root, '.services'), { recursive: true });
    execFileSync('python3', ['-m', 'venv', '--clear', VENV], { stdio: 'inherit' });
    execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...REQUIREMENTS], { stdio: 'inherit' });
    writeFileSync(stamp, '');
  }
  return python;
}

const SERVER = `
from mcp.server.fastmcp import FastMCP
server = FastMCP("weather")

@server.tool()
def get_weather(city: str, days: int = 1) -> str:
    """Forecast."""
    return f"sunny in {city} for {days} days"

server.run("stdio")
`;

const CLIENT = `
import asyncio, json, os, sys
os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
url, key, task, server_code = sys.argv[1:5]
exporter = lambda: OTLPSpanExporter(endpoint=url, headers={"authorization": "Bearer " + key})
provider = TracerProvider(resource=Resource.create({"service.name": "kernel", "tool_audit.task_id": task}))
provider.add_span_processor(SimpleSpanProcessor(exporter()))
kept = InMemorySpanExporter()
provider.add_span_processor(SimpleSpanProcessor(kept))
trace.set_tracer_provider(provider)
from opentelemetry.instrumentation.mcp import McpInstrumentor
McpInstrumentor().instrument(tracer_provider=provider)
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    async with stdio_client(StdioServerParameters(command=sys.executable, args=["-c", server_code])) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            print((await s.call_tool("get_weather", {"city": "Oslo", "days": 2})).content[0].text)

asyncio.run(main())
provider.force_flush()
exporter().export(kept.get_finished_spans())
print("SPANS " + json.dumps(sorted(s.name for s in kept.get_finished_spans())))
`;

let otlp: OtlpApp;
beforeAll(async () => {
  otlp = await startOtlpApp('ollm');
});
afterAll(async () => otlp.close());

describe('an MCP client under OpenLLMetry', () => {
  it('stores the call once, with its arguments as sent and its result; a re-export stores nothing', async () => {
    const python = venvPython();
    const task = `ollm-mcp-${Date.now()}`;
    // Not execFileSync: the server answering the exports runs on this event loop.
    const { stdout: out } = await promisify(execFile)(python, ['-c', CLIENT, otlp.url, otlp.key, task, SERVER], { encoding: 'utf8' });
    expect(out).toContain('sunny in Oslo for 2 days');
    // The instrumentation's spans beside the call's: none of them is a call.
    expect(JSON.parse(/^SPANS (.*)$/m.exec(out)?.[1] ?? '[]')).toEqual(expect.arrayContaining(['get_weather.tool', 'initialize.mcp', 'tools/list.mcp']));

    const canonical = execFileSync('python3', ['-c', 'import json; print(json.dumps({"city": "Oslo", "days": 2}, sort_keys=True), end="")'], { encoding: 'utf8' });
    const stored = await rows<{ call_id: string; tool_id: string; args: string; args_hash: string; status: string }>(otlp.ch, 'SELECT toString(call_id) AS call_id, tool_id, args, args_hash, toString(status) AS status FROM {db:Identifier}.tool_invocations WHERE task_id = {t:String}', { db: otlp.db, t: task });
    expect(stored.map((r) => [r.tool_id, r.args, r.args_hash, r.status])).toEqual([['get_weather', canonical, createHash('sha256').update(canonical).digest('hex'), 'success']]);
    const [output] = await rows<{ sample: string }>(otlp.ch, 'SELECT sample FROM {db:Identifier}.tool_outputs WHERE call_id = {c:UUID}', { db: otlp.db, c: stored[0]!.call_id });
    expect(output?.sample).toContain('sunny in Oslo for 2 days');
    expect(await count(otlp.ch, otlp.db, 'quarantine')).toBe(0);
  }, 180_000);
});
