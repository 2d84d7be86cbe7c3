/**
 * The gateway's audit state, fed message by message as the transports feed it: one record per
 * tools/call whatever ends it, the task from _meta / traceparent / the session, tools/list
 * pages gathered into one report, and messages that are not ours ignored.
 */
import { describe, expect, it } from 'vitest';
import type { ObservedCall } from '../../../../emit/emitter.ts';
import { AuditSession, traceId, type ToolsListSeen } from '../../../../emit/mcp/audit-session.ts';
import { definitionHash } from '../../../../schemas/mcp-tools.ts';

function session(opts: { agentId?: string; serverName?: string } = {}) {
  const recorded: ObservedCall[] = [];
  const lists: ToolsListSeen[] = [];
  let now = 0;
  const s = new AuditSession({ recorder: { recordCall: (c) => (recorded.push(c), 'id') }, taskId: 'session-task', onToolsList: (l) => lists.push(l), now: () => now, ...opts });
  return { s, recorded, lists, tick: (ms: number) => (now += ms) };
}

const init = (s: AuditSession) => {
  s.fromClient({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { clientInfo: { name: 'claude-desktop', version: '1' } } });
  s.fromServer({ jsonrpc: '2.0', id: 0, result: { serverInfo: { name: 'fs', version: '2' } } });
};
const call = (id: number | string, name: string, args: unknown, meta?: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) } });

describe('AuditSession', () => {
  it('records a call with its duration, names from initialize, args hashed from the raw text', () => {
    const { s, recorded, tick } = session();
    init(s);
    const raw = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"b":2.0,"a":1e-7}}}';
    s.fromClient(JSON.parse(raw), raw);
    tick(12.5);
    s.fromServer({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'hi' }] } });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ toolId: 'fs/read', agentId: 'claude-desktop', taskId: 'session-task', durationMs: 12.5, status: 'success', argsCanonical: '{"a": 1e-07, "b": 2.0}' });
    expect(recorded[0]?.content).toEqual({ text: 'hi', contentType: 'text', embed: false });
    expect(s.pending).toBe(0);
  });

  it('flags win over what initialize says', () => {
    const { s, recorded } = session({ agentId: 'qa', serverName: 'files' });
    init(s);
    s.fromClient(call(1, 't', {}));
    s.fromServer({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    expect(recorded[0]).toMatchObject({ toolId: 'files/t', agentId: 'qa' });
  });

  it('task from _meta, else the traceparent trace id, else the session', () => {
    const { s, recorded } = session();
    s.fromClient(call(1, 't', {}, { 'tool-audit/task_id': 'T-1', 'tool-audit/agent_id': 'A-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }));
    s.fromClient(call(2, 't', {}, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }));
    s.fromClient(call(3, 't', {}, { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' }));
    for (const id of [1, 2, 3]) s.fromServer({ jsonrpc: '2.0', id, result: {} });
    expect(recorded.map((r) => [r.taskId, r.agentId])).toEqual([
      ['T-1', 'A-1'],
      ['0af7651916cd43dd8448eb211c80319c', 'mcp-client'],
      ['session-task', 'mcp-client'],
    ]);
    // The client's span the call was made in goes with it; an invalid traceparent records nothing.
    expect(recorded.map((r) => (r.resultSummary as { otel?: unknown } | undefined)?.otel)).toEqual([
      { trace_id: '0af7651916cd43dd8448eb211c80319c', parent_span_id: 'b7ad6b7169203331' },
      { trace_id: '0af7651916cd43dd8448eb211c80319c', parent_span_id: 'b7ad6b7169203331' },
      undefined,
    ]);
    expect(traceId('garbage')).toBeUndefined();
  });

  it("an approval in _meta['tool-audit/approval'] goes with the call; none without one", () => {
    const { s, recorded } = session();
    const approval = { approved_by: 'dana', approved_at: '2026-11-22T10:00:00+01:00', reference: 'CHG-7' };
    s.fromClient(call(1, 't', {}, { 'tool-audit/approval': approval }));
    s.fromClient(call(2, 't', {}));
    for (const id of [1, 2]) s.fromServer({ jsonrpc: '2.0', id, result: {} });
    expect(recorded[0]?.approval).toEqual({ approvedBy: 'dana', approvedAt: '2026-11-22T10:00:00+01:00', reference: 'CHG-7' });
    expect(recorded[1]?.approval).toBeUndefined();
  });

  it('a cancellation ends the call once; a late answer is not a second record', () => {
    const { s, recorded } = session();
    s.fromClient(call('a', 't', { x: 1 }));
    s.fromClient(call('b', 't', { x: 2 }));
    s.fromClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'McpError: MCP error -32001: Request timed out' } });
    s.fromClient({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b', reason: 'user stop' } });
    s.fromServer({ jsonrpc: '2.0', id: 'a', result: {} });
    expect(recorded.map((r) => [r.status, r.error])).toEqual([
      ['timeout', 'cancelled by the client: McpError: MCP error -32001: Request timed out'],
      ['error', 'cancelled by the client: user stop'],
    ]);
  });

  it('server requests and notifications with colliding ids are not answers; close() ends what is pending', () => {
    const { s, recorded } = session();
    s.fromClient(call(5, 't', {}));
    s.fromServer({ jsonrpc: '2.0', id: 5, method: 'sampling/createMessage', params: {} });
    s.fromServer({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 5, progress: 1 } });
    expect(recorded).toHaveLength(0);
    s.close('upstream gone');
    expect(recorded).toMatchObject([{ status: 'error', error: 'upstream gone', resultSummary: { answered: false } }]);
  });

  it('batches are read element by element', () => {
    const { s, recorded } = session();
    s.fromClient([call(1, 'a', {}), call(2, 'b', {})]);
    s.fromServer([{ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad' } }, { jsonrpc: '2.0', id: 1, result: { isError: true, content: [{ type: 'text', text: 'boom' }] } }]);
    expect(recorded.map((r) => [r.toolId, r.status, r.error])).toEqual([
      ['mcp-server/b', 'invalid_input', 'JSON-RPC error -32602: bad'],
      ['mcp-server/a', 'error', 'boom'],
    ]);
  });

  it('tools/list pages are reported once, whole, with definition hashes remembered', () => {
    const { s, lists } = session();
    init(s);
    const t1 = { name: 'read', description: 'reads', inputSchema: { type: 'object' } };
    const t2 = { name: 'write', description: 'writes', inputSchema: { type: 'object' }, annotations: { destructiveHint: true } };
    s.fromClient({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    s.fromServer({ jsonrpc: '2.0', id: 1, result: { tools: [t1], nextCursor: 'p2' } });
    expect(lists).toHaveLength(0);
    s.fromClient({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: 'p2' } });
    s.fromServer({ jsonrpc: '2.0', id: 2, result: { tools: [t2] } });
    expect(lists).toHaveLength(1);
    expect(lists[0]).toMatchObject({ server: 'fs', serverInfo: { name: 'fs', version: '2' }, tools: [t1, t2] });
    expect(s.announced.get('write')).toBe(definitionHash(t2));
    // A page after a cursor without its first page is not a whole list.
    s.fromClient({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'p2' } });
    s.fromServer({ jsonrpc: '2.0', id: 3, result: { tools: [t2] } });
    expect(lists).toHaveLength(1);
  });
});
