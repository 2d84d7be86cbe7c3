/**
 * The small parts of the gateway: line splitting across chunks, the pin's verdicts, the guard's
 * refusals and their JSON-RPC errors, batch refusal, and the command line.
 */
import { describe, expect, it, vi } from 'vitest';
import { parseMcpArgs } from '../../../../cli/mcp.ts';
import { createCallGuard, newGuardStats, refusalResponse } from '../../../../emit/mcp/call-guard.ts';
import { batchRefusal, batchWithCall } from '../../../../emit/mcp/json-rpc.ts';
import { LineSplitter } from '../../../../emit/mcp/stdio-gateway.ts';
import { ToolPin } from '../../../../emit/mcp/tool-definitions.ts';
import { definitionHash } from '../../../../schemas/mcp-tools.ts';
import type { PendingCall } from '../../../../emit/mcp/audit-session.ts';

const pending = (name: string): PendingCall => ({ callId: undefined, toolId: `s/${name}`, name, args: {}, argsCanonical: '{}', taskId: 't', agentId: 'a', start: 0 });

describe('LineSplitter', () => {
  it('gives whole lines whatever the chunking', () => {
    const text = '{"a":1}\n{"b":"ü"}\n\n{"c":3}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const s = new LineSplitter();
      const lines = [...s.push(bytes.subarray(0, cut)), ...s.push(bytes.subarray(cut))].map((l) => l.toString('utf8'));
      expect(lines).toEqual(['{"a":1}', '{"b":"ü"}', '', '{"c":3}']);
    }
  });

  it('hands back an unfinished last line once the stream ends', () => {
    const s = new LineSplitter();
    expect(s.push(Buffer.from('{"a":1}\n{"par')).map(String)).toEqual(['{"a":1}']);
    s.push(Buffer.from('tial"'));
    expect(s.rest().toString('utf8')).toBe('{"partial"');
    expect(s.rest().length).toBe(0);
  });
});

describe('LineSplitter on long lines', () => {
  it('joins a 4 MB line that came in 4 KB pieces once, and keeps what follows it', () => {
    const line = Buffer.from(`{"big":"${'x'.repeat(4 * 1024 * 1024)}"}`);
    const stream = Buffer.concat([line, Buffer.from('\n{"next":1}\n{"part')]);
    const s = new LineSplitter();
    const out: Buffer[] = [];
    const concat = vi.spyOn(Buffer, 'concat');
    for (let i = 0; i < stream.length; i += 4096) out.push(...s.push(stream.subarray(i, i + 4096)));
    // One join for the long line (and one for the short one that spans a piece boundary at most).
    expect(concat.mock.calls.length).toBeLessThanOrEqual(2);
    concat.mockRestore();
    expect(out.map((b) => b.length)).toEqual([line.length, 10]);
    expect(out[0]?.equals(line)).toBe(true);
    expect(s.push(Buffer.from('":2}\n')).map(String)).toEqual(['{"part":2}']);
  });
});

describe('ToolPin and the guard', () => {
  const read = { name: 'read', description: 'reads', inputSchema: { type: 'object' } };
  const pin = ToolPin.parse({ tools: [read] }) as ToolPin;

  it('refuses tools not pinned, redefined or whose live definition is unknown (fail closed), allows the pinned definition', () => {
    expect(pin.judge('read', definitionHash(read))).toBeNull();
    expect(pin.judge('read', undefined)?.reason).toBe('definition_unknown');
    expect(pin.judge('write', undefined)?.reason).toBe('not_pinned');
    expect(pin.judge('read', definitionHash({ ...read, description: 'reads and mails' }))?.reason).toBe('definition_changed');
    expect(ToolPin.parse({})).toMatch(/no tool/);
    expect((ToolPin.parse([read]) as ToolPin).size).toBe(1);
  });

  it('counts and answers refusals as JSON-RPC errors; a budget deny carries its decision', async () => {
    const stats = newGuardStats();
    const budget = { checkBudget: async () => ({ decision: 'deny' as const, budgets: [{ budget_id: 'b1', limit_usd: 1, spent_usd: 1, reserved_usd: 0, remaining_usd: 0, mode: 'deny' as const }], decision_id: 'd1', fallback: false }) };
    const guard = createCallGuard({ pin, budget }, stats);
    const a = await guard?.(pending('write'), new Map());
    expect(a).toMatchObject({ ok: false, reason: 'not_pinned' });
    const b = await guard?.(pending('read'), new Map([['read', definitionHash(read)]]));
    expect(b).toMatchObject({ ok: false, reason: 'budget_denied', data: { decision_id: 'd1' } });
    expect(await guard?.(pending('read'), new Map())).toMatchObject({ ok: false, reason: 'definition_unknown' });
    expect(stats).toEqual({ admitted: 0, refused: { budget_denied: 1, not_pinned: 1, definition_changed: 0, definition_unknown: 1 } });
    expect(guard?.pinned).toBe(true);
    expect(createCallGuard({ budget }, stats)?.pinned).toBe(false);
    if (b && !b.ok) expect(refusalResponse(7, b)).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32050, message: b.message, data: { tool_audit: { reason: 'budget_denied', decision_id: 'd1', budgets: b.data.budgets } } } });
    expect(createCallGuard({}, stats)).toBeUndefined();
  });

  it('refuses a batch holding a call whole, answering each request', () => {
    const batch = [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }, { jsonrpc: '2.0', method: 'notifications/x' }, { jsonrpc: '2.0', id: 'q', method: 'ping' }];
    expect(batchWithCall(batch)).toBe(true);
    expect(batchRefusal(batch).map((r) => r.id)).toEqual([1, 'q']);
  });
});

describe('parseMcpArgs', () => {
  it('stdio and HTTP forms', () => {
    expect(parseMcpArgs(['--agent-id', 'qa', '--', 'npx', '-y', 'server', '/data'])).toMatchObject({ command: ['npx', '-y', 'server', '/data'], agentId: 'qa', orchestrator: 'gateway', instanceId: 'mcp-gateway' });
    expect(parseMcpArgs(['--upstream', 'https://h/mcp', '--listen', ':8787'])).toMatchObject({ listen: { host: '127.0.0.1', port: 8787 } });
    expect(parseMcpArgs(['--upstream', 'https://h/mcp', '--listen', '0.0.0.0:9'])).toMatchObject({ listen: { host: '0.0.0.0', port: 9 } });
  });

  it('names every problem', () => {
    expect(parseMcpArgs([])).toMatch(/server command after --/);
    expect(parseMcpArgs(['--upstream', 'ftp://x'])).toMatch(/http\(s\) URL/);
    expect(parseMcpArgs(['--upstream', 'https://h/mcp'])).toMatch(/needs --listen/);
    expect(parseMcpArgs(['--orchestrator', 'x', '--check-budget', 'abc', '--budget-unavailable', 'maybe', '--', 'srv'])).toMatch(/orchestrator.*check-budget.*budget-unavailable/);
    expect(parseMcpArgs(['--budget-timeout-ms', '0', '--', 'srv'])).toMatch(/--budget-timeout-ms must be a whole number of ms ≥ 1; got 0/);
    expect(parseMcpArgs(['--budget-timeout-ms', '2.5', '--', 'srv'])).toMatch(/budget-timeout-ms/);
    expect(parseMcpArgs(['--', 'srv'])).toMatchObject({ budgetTimeoutMs: 50 });
    expect(parseMcpArgs(['--budget-timeout-ms', '800', '--', 'srv'])).toMatchObject({ budgetTimeoutMs: 800 });
    expect(parseMcpArgs(['--bogus', '--', 'srv'])).toMatch(/bogus/);
  });
});
