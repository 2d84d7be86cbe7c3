/**
 * The secrets fixture (secret-fixture.ts) in the form each entry path takes it: tool_call packets
 * (POST /v1/packets, raw Kafka records), emitter calls, a Python emitter script, OTel tool spans,
 * MCP tool calls — one call of tool `fixture` per planted item.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Span, Tracer } from '@opentelemetry/api';
import type { AuditEmitter } from '../../emit/index.ts';
import { auditResult } from '../../emit/index.ts';
import { toolCall } from './packets.ts';
import { SECRET_FIXTURE } from './secret-fixture.ts';

/** Calls each path makes: one per planted item. */
export const FIXTURE_CALLS = SECRET_FIXTURE.length;

/** One tool_call packet per item, of `task`. */
export function fixturePackets(task: string): Array<ReturnType<typeof toolCall>> {
  return SECRET_FIXTURE.map((p) => toolCall({ tool_id: 'fixture', args: p.args, created_at: new Date().toISOString() }, task));
}

/** Each item through an emitter, as a call whose args are the item's. */
export async function fixtureViaEmitter(emitter: AuditEmitter, task: string): Promise<void> {
  for (const p of SECRET_FIXTURE) await emitter.invoke('fixture', p.args, async () => auditResult('ok', { resultSummary: { ok: true } }), { taskId: task });
}

/** A Python script (argv: emit-python dir, url, key, redaction key or '', task; stdin: the items' args) sending each item. */
export const FIXTURE_PYTHON = `
import json, sys
sys.path.insert(0, sys.argv[1])
from tool_audit_emit import AuditEmitter
url, key, rkey, task = sys.argv[2:6]
audit = AuditEmitter("gateway", "py", http={"url": url, "api_key": key}, redaction={"key": rkey} if rkey else None)
for args in json.loads(sys.stdin.read()):
    with audit.call("fixture", args, task_id=task) as call:
        call.set_result({"ok": True})
assert audit.flush(30)
audit.close()
`;

/** The items' args, as the Python script reads them. */
export const fixtureArgsJson = (): string => JSON.stringify(SECRET_FIXTURE.map((p) => p.args));

/** One OTel GenAI execute_tool span per item under `parent`, its arguments the item's args. */
export function fixtureSpans(tracer: Tracer, parentContext: Parameters<Tracer['startSpan']>[2], task: string): Span[] {
  return SECRET_FIXTURE.map((p, i) => {
    const span = tracer.startSpan('execute_tool fixture', { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'fixture', 'gen_ai.tool.call.id': `fixture_${i}`, 'gen_ai.tool.call.arguments': JSON.stringify(p.args), 'tool_audit.task_id': task } }, parentContext);
    span.end();
    return span;
  });
}

/** Each item as an MCP tools/call of `lookup` (the server takes `key`; the gateway audits every argument sent). */
export async function fixtureViaMcp(client: Client): Promise<void> {
  for (const p of SECRET_FIXTURE) await client.callTool({ name: 'lookup', arguments: { key: 'k', ...p.args } });
}
