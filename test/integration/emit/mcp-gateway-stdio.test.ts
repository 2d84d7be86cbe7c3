/**
 * `tool-audit mcp` over stdio with the official TypeScript SDK client, in front of the real
 * everything and filesystem servers, delivering to a served tool-audit: N calls are exactly N
 * stored tool_calls whose args_hash is CPython's; tool errors, protocol errors, cancellations
 * and client timeouts are mapped; progress notifications and sampling requests pass through
 * untouched; a budget deny never reaches the server.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, everythingServer, filesystemServer, gatewayArgs, gatewayEnv, pythonArgsHashes, serveForSuite, waitForCalls } from '../../helpers/mcp.ts';

const { served } = serveForSuite();

async function connect(flags: string[], server: string[], env = gatewayEnv(served)): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: gatewayArgs(flags, server), env, stderr: 'inherit' });
  const client = new Client({ name: 'stdio-test-client', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    model: 'test-model',
    role: 'assistant',
    content: { type: 'text', text: `sampled: ${JSON.stringify(req.params.messages[0]?.content)}` },
  }));
  await client.connect(transport);
  return client;
}

describe('tool-audit mcp over stdio (TypeScript SDK client)', () => {
  it('records exactly one tool_call per tools/call with CPython args hashes, statuses mapped, notifications and sampling passed through', async () => {
    const task = randomUUID();
    const client = await connect(['--task-id', task], everythingServer());
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('echo');

    const echoArgs = [
      { message: 'plain' },
      { message: 'unicode é 日本 🎉 "quotes" \\ back' },
      { message: 'x'.repeat(3000) },
      ...Array.from({ length: 17 }, (_, i) => ({ message: `m${i}` })),
    ];
    for (const a of echoArgs) expect(await client.callTool({ name: 'echo', arguments: a })).toEqual({ content: [{ type: 'text', text: `Echo: ${a.message}` }] });
    const sumArgs = { a: 1.5, b: -2e-7, c: 1e21, d: 0.0001, e: 123456789012 };
    await client.callTool({ name: 'get-sum', arguments: sumArgs });

    // A tool error (isError result) and a protocol error the server answers for an unknown tool.
    const badArgs = { message: 42 };
    const bad = await client.callTool({ name: 'echo', arguments: badArgs });
    expect(bad.isError).toBe(true);
    const unknown = await client.callTool({ name: 'no-such-tool', arguments: {} }).catch((e: unknown) => e);

    // Progress notifications reach the client unchanged.
    const progress: number[] = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([...progress].sort((x, y) => x - y));

    // A sampling request from the server reaches the client, and its answer the server.
    const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'ping', maxTokens: 10 } });
    expect(JSON.stringify(sampled)).toContain('sampled:');

    // The client's timeout and an explicit cancellation: the SDK sends notifications/cancelled.
    const timedOut = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } }, undefined, { timeout: 300 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(McpError);
    const abort = new AbortController();
    setTimeout(() => abort.abort(new Error('user pressed stop')), 200);
    await expect(client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } }, undefined, { signal: abort.signal })).rejects.toThrow();
    await client.close();

    const made = echoArgs.length + 1 + 2 + 1 + 1 + 2;
    const calls = await waitForCalls(served, task, made);
    expect(calls).toHaveLength(made);
    const byArgs = (tool: string) => calls.filter((c) => c.tool_id === `mcp-servers/everything/${tool}`);
    const echoes = byArgs('echo').filter((c) => c.status === 'success');
    expect(echoes.map((c) => c.args_hash).sort()).toEqual(pythonArgsHashes(echoArgs).sort());
    expect(byArgs('get-sum')[0]?.args_hash).toBe(pythonArgsHashes([sumArgs])[0]);
    for (const c of calls) expect(c).toMatchObject({ agent_id: 'stdio-test-client', orchestrator: 'gateway' });

    const failed = byArgs('echo').filter((c) => c.status !== 'success');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ status: 'error', args_hash: pythonArgsHashes([badArgs])[0] });
    const unknownCall = byArgs('no-such-tool')[0];
    // The SDK server answers an unknown tool with a JSON-RPC error (invalid params) or an isError result, by version.
    expect(unknownCall?.status).toMatch(unknown instanceof McpError ? /^invalid_input$/ : /^error$/);
    const long = byArgs('trigger-long-running-operation');
    expect(long.map((c) => c.status).sort()).toEqual(['error', 'success', 'timeout']);
    expect(long.find((c) => c.status === 'error')?.error).toMatch(/cancelled by the client: .*user pressed stop/);
    expect(long.find((c) => c.status === 'timeout')?.error).toMatch(/timed out/i);
    expect(byArgs('trigger-sampling-request')[0]?.status).toBe('success');
  }, 90_000);

  it('a budget deny is answered by the gateway: the filesystem server never sees the call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-fs-'));
    writeFileSync(join(dir, 'hello.txt'), 'hello');
    const put = await fetch(`${served.url}/v1/budgets`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ budget_id: 'no-writes', scope: { tool_id: 'secure-filesystem-server/write_file' }, period: 'day', limit_usd: 0.01, mode: 'deny' }]),
    });
    expect(put.status).toBe(200);
    const task = randomUUID();
    // A check's answer, not its latency, is what this test is about: the first check of a new
    // process on a machine running other test files missed the 50 ms default (CI, 2026-11-26).
    const client = await connect(['--task-id', task, '--check-budget', '0.02', '--budget-unavailable', 'deny', '--budget-timeout-ms', '5000'], filesystemServer(dir));
    const read = await client.callTool({ name: 'read_text_file', arguments: { path: join(dir, 'hello.txt') } });
    expect(JSON.stringify(read)).toContain('hello');
    const denied = await client.callTool({ name: 'write_file', arguments: { path: join(dir, 'new.txt'), content: 'x' } }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(McpError);
    expect((denied as McpError).code).toBe(-32050);
    expect((denied as McpError).message).toMatch(/no-writes/);
    await client.close();
    expect(existsSync(join(dir, 'new.txt'))).toBe(false);
    expect(readFileSync(join(dir, 'hello.txt'), 'utf8')).toBe('hello');
    const calls = await waitForCalls(served, task, 1);
    // Only the call that ran is a tool_call; the deny is a budget decision.
    expect(calls.map((c) => c.tool_id)).toEqual(['secure-filesystem-server/read_text_file']);
    const denials = async () => ((await (await fetch(`${served.url}/v1/budget/decisions?decision=deny`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as { decisions: Array<{ request: { tool_id: string } }> }).decisions.map((d) => d.request.tool_id);
    await expect.poll(denials, { timeout: 10_000 }).toEqual(['secure-filesystem-server/write_file']);
  }, 60_000);
});
