/**
 * Cases a review of the gateway found broken, kept from coming back: a refusal never lands inside
 * a server line split across chunks; sessions of an HTTP gateway stay apart (a probe without a
 * session id, two initializes, a session-less server's clients reusing ids); a message too deep to
 * canonicalise is relayed and said, not fatal; args Python reads as Infinity fall back to JSON.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ObservedCall } from '../../../../emit/emitter.ts';
import { AuditSession } from '../../../../emit/mcp/audit-session.ts';
import { ClientWriter } from '../../../../emit/mcp/client-writer.ts';
import { HttpSessions } from '../../../../emit/mcp/http-sessions.ts';

function sink(): { out: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const out = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(Buffer.from(c)), cb()) });
  return { out, text: () => Buffer.concat(chunks).toString('utf8') };
}

function recorder() {
  const recorded: ObservedCall[] = [];
  return { recorded, recordCall: (c: ObservedCall) => (recorded.push(c), 'id') };
}

describe('ClientWriter', () => {
  it('holds an injected line until the server line in progress is whole', () => {
    const { out, text } = sink();
    const w = new ClientWriter(out, { pause: () => undefined, resume: () => undefined });
    w.server(Buffer.from('{"jsonrpc":"2.0","id":1,"res'));
    w.inject('{"refused":7}');
    w.server(Buffer.from('ult":{}}\n{"next":'));
    w.server(Buffer.from('1}\n'));
    w.inject('{"refused":8}');
    expect(text().split('\n')).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}', '{"refused":7}', '{"next":1}', '{"refused":8}', '']);
  });

  it('writes what it holds when the server stops mid-line', () => {
    const { out, text } = sink();
    const w = new ClientWriter(out, { pause: () => undefined, resume: () => undefined });
    w.server(Buffer.from('{"partial"'));
    w.inject('{"refused":1}');
    w.end();
    expect(text()).toBe('{"partial"\n{"refused":1}\n');
  });
});

describe('HttpSessions', () => {
  const make = () => {
    const rec = recorder();
    return { rec, sessions: new HttpSessions((taskId) => new AuditSession({ recorder: rec, taskId })) };
  };
  const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

  it('a request without a session id never merges later sessions', () => {
    const { rec, sessions } = make();
    sessions.anonymous(); // a GET probe: audited in a session of its own, not filed
    const a = sessions.anonymous().session;
    const b = sessions.anonymous().session;
    sessions.initialized(a, 'S1');
    sessions.initialized(b, 'S2');
    sessions.of('S1').fromClient(call(1, 'x'));
    sessions.of('S2').fromClient(call(1, 'y'));
    sessions.of('S1').fromServer({ jsonrpc: '2.0', id: 1, result: {} });
    sessions.of('S2').fromServer({ jsonrpc: '2.0', id: 1, result: {} });
    expect(rec.recorded.map((r) => [r.taskId, r.toolId])).toEqual([
      ['S1', 'mcp-server/x'],
      ['S2', 'mcp-server/y'],
    ]);
  });

  it("a session-less server's clients may reuse ids: each exchange is a fork", () => {
    const { rec, sessions } = make();
    const init = sessions.anonymous().session;
    init.fromClient({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { clientInfo: { name: 'c' } } });
    init.fromServer({ jsonrpc: '2.0', id: 0, result: { serverInfo: { name: 'srv' } } });
    sessions.initialized(init, undefined);
    const one = sessions.anonymous();
    const two = sessions.anonymous();
    expect(one.fork && two.fork).toBe(true);
    one.session.fromClient(call(1, 'a'));
    two.session.fromClient(call(1, 'b'));
    two.session.fromServer({ jsonrpc: '2.0', id: 1, result: { isError: true, content: [] } });
    one.session.fromServer({ jsonrpc: '2.0', id: 1, result: {} });
    expect(rec.recorded.map((r) => [r.toolId, r.status, r.agentId, r.taskId])).toEqual([
      ['srv/b', 'error', 'c', init.taskId],
      ['srv/a', 'success', 'c', init.taskId],
    ]);
    sessions.done(one.session);
    expect(rec.recorded).toHaveLength(2);
  });

  it('ends a session the server no longer knows, and the least recently used beyond the bound', () => {
    const { rec, sessions } = make();
    sessions.of('gone').fromClient(call(3, 'z'));
    sessions.end('gone', 'the MCP server no longer knows the session');
    expect(rec.recorded.map((r) => r.error)).toEqual(['the MCP server no longer knows the session']);
    expect(sessions.size).toBe(0);

    const bounded = new HttpSessions((taskId) => new AuditSession({ recorder: rec, taskId }), 2);
    bounded.of('A').fromClient(call(1, 'a'));
    bounded.of('B');
    bounded.of('A'); // A is now the most recent: B goes first
    bounded.of('C');
    expect(bounded.size).toBe(2);
    bounded.of('D'); // then A, with its call pending
    expect(rec.recorded.map((r) => [r.taskId, r.error])).toEqual([
      ['gone', 'the MCP server no longer knows the session'],
      ['A', 'the gateway held too many sessions and ended the least recently used'],
    ]);
  });
});

describe('AuditSession on hostile args', () => {
  it('a message too deep to canonicalise is said, not thrown', () => {
    const rec = recorder();
    const errors: unknown[] = [];
    const s = new AuditSession({ recorder: rec, taskId: 't', onAuditError: (e) => errors.push(e) });
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const raw = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":${deep}}}}`;
    expect(() => s.fromClient(JSON.parse(raw), raw)).not.toThrow();
    expect(errors).toHaveLength(1);
  });

  it('args Python reads as Infinity are sent as JSON, not as a canonical text JSON cannot carry', () => {
    const rec = recorder();
    const s = new AuditSession({ recorder: rec, taskId: 't' });
    const raw = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1e400,"b":1.0}}}';
    s.fromClient(JSON.parse(raw), raw);
    s.fromServer({ jsonrpc: '2.0', id: 1, result: {} });
    expect(rec.recorded[0]?.argsCanonical).toBeUndefined();
    const ok = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"b":1.0}}}';
    s.fromClient(JSON.parse(ok), ok);
    s.fromServer({ jsonrpc: '2.0', id: 2, result: {} });
    expect(rec.recorded[1]?.argsCanonical).toBe('{"b": 1.0}');
  });
});
