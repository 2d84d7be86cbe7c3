/**
 * `tool-audit mcp --upstream URL --listen PORT` (Streamable HTTP) with the official TypeScript
 * SDK client: sessions become tasks (Mcp-Session-Id), SSE answers stream through (progress
 * notifications, a sampling request and its answer), auth headers reach the server untouched,
 * and every tools/call is one tool_call with CPython's args_hash.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, type McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { everythingServer, gatewayEnv, pythonArgsHashes, randomPort, root, serveForSuite, spawnListening, testServer, waitForCalls } from '../../helpers/mcp.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const { served, running } = serveForSuite();

async function gatewayInFront(upstreamPort: number, flags: string[] = []): Promise<number> {
  const port = randomPort();
  const argv = [process.execPath, join(root, 'bin/tool-audit.mjs'), 'mcp', '--upstream', `http://127.0.0.1:${upstreamPort}/mcp`, '--listen', `127.0.0.1:${port}`, ...flags];
  running.push(await spawnListening(argv, port, gatewayEnv(served)));
  return port;
}

async function connect(port: number, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'http-test-client', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled over http' } }));
  await client.connect(transport);
  return { client, transport };
}

describe('tool-audit mcp over Streamable HTTP (TypeScript SDK client)', () => {
  it('forwards auth headers untouched; one tool_call per call, the session is the task', async () => {
    const upstream = randomPort();
    running.push(await spawnListening(testServer('http', upstream), upstream));
    const port = await gatewayInFront(upstream);
    const { client, transport } = await connect(port, { authorization: 'Bearer upstream-secret-42' });
    expect(await client.callTool({ name: 'whoami', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'Bearer upstream-secret-42' }] });
    const args = Array.from({ length: 30 }, (_, i) => ({ key: `k${i} ü`, ...(i % 3 === 0 ? { n: i / 4 } : {}) }));
    for (const a of args) await client.callTool({ name: 'lookup', arguments: a });
    // A request too large to hold for the audit (over 32 MiB) still reaches the server, unaudited.
    const huge = 'h'.repeat(33 * 1024 * 1024);
    expect(JSON.stringify(await client.callTool({ name: 'lookup', arguments: { key: huge } })).length).toBeGreaterThan(huge.length);
    const session = transport.sessionId as string;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    await transport.terminateSession();
    await client.close();
    const calls = await waitForCalls(served, session, 31);
    expect(calls).toHaveLength(31);
    const lookups = calls.filter((c) => c.tool_id === 'audit-test-server/lookup');
    expect(lookups.map((c) => c.args_hash).sort()).toEqual(pythonArgsHashes(args).sort());
    expect(calls.every((c) => c.status === 'success' && c.agent_id === 'http-test-client')).toBe(true);
  }, 60_000);

  it('a pin fails closed: the gateway lists the live definitions in the session itself (SSE answer), and again after list_changed', async () => {
    const upstream = randomPort();
    running.push(await spawnListening(testServer('http', upstream), upstream));
    const probe = await connect(await gatewayInFront(upstream));
    const tools = (await probe.client.listTools()).tools.filter((t) => t.name !== 'extra');
    await probe.client.close();
    const pinFile = join(served.dir, `pin-http-${upstream}.json`);
    writeFileSync(pinFile, JSON.stringify({ tools }));
    const { client } = await connect(await gatewayInFront(upstream, ['--pin-manifest', pinFile]));
    expect(await client.callTool({ name: 'lookup', arguments: { key: 'k' } })).toMatchObject({ content: [{ type: 'text', text: 'value of k' }] });
    expect(((await client.callTool({ name: 'extra', arguments: {} }).catch((e: unknown) => e)) as McpError).code).toBe(-32051);
    await client.callTool({ name: 'redefine', arguments: {} });
    expect(((await client.callTool({ name: 'lookup', arguments: { key: 'k' } }).catch((e: unknown) => e)) as McpError).code).toBe(-32052);
    await client.close();
  }, 60_000);

  it('audits answers the server compressed (gzip JSON), passing the compressed bytes through', async () => {
    // A minimal Streamable HTTP server answering JSON, gzip-compressed: enough MCP for a session.
    const upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const msg = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { id?: number; method?: string; params?: { protocolVersion?: string } };
        if (msg.id === undefined) return void res.writeHead(202).end();
        const result = msg.method === 'initialize' ? { protocolVersion: msg.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'gzip-server', version: '1.0.0' } } : { content: [{ type: 'text', text: `done ${msg.id}` }] };
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'mcp-session-id': 'gzip-session-1' }).end(gzipSync(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    try {
      const port = await gatewayInFront((upstream.address() as AddressInfo).port);
      const { client } = await connect(port);
      for (let i = 0; i < 5; i++) expect(JSON.stringify(await client.callTool({ name: 'compress', arguments: { i } }))).toContain('done');
      await client.close();
      const calls = await waitForCalls(served, 'gzip-session-1', 5);
      expect(calls.map((c) => [c.tool_id, c.status])).toEqual(Array(5).fill(['gzip-server/compress', 'success']));
    } finally {
      upstream.close();
    }
  }, 60_000);

  it('streams SSE answers through: progress, sampling, errors, from the everything server', async () => {
    const upstream = randomPort();
    running.push(await spawnListening(everythingServer('streamableHttp'), upstream, { ...gatewayEnv(served), PORT: String(upstream) }));
    const port = await gatewayInFront(upstream);
    const { client, transport } = await connect(port);
    const progress: number[] = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } });
    expect(JSON.stringify(sampled)).toContain('sampled over http');
    const bad = await client.callTool({ name: 'echo', arguments: { message: 7 } });
    expect(bad.isError).toBe(true);
    const echoes = Array.from({ length: 10 }, (_, i) => ({ message: `e${i}` }));
    for (const a of echoes) await client.callTool({ name: 'echo', arguments: a });
    const session = transport.sessionId as string;
    await client.close();
    const calls = await waitForCalls(served, session, 13);
    expect(calls).toHaveLength(13);
    const status = (tool: string) => calls.filter((c) => c.tool_id === `mcp-servers/everything/${tool}`).map((c) => c.status);
    expect(status('trigger-long-running-operation')).toEqual(['success']);
    expect(status('trigger-sampling-request')).toEqual(['success']);
    expect(status('echo').sort()).toEqual([...Array(10).fill('success'), 'error'].sort());
    const ok = calls.filter((c) => c.tool_id === 'mcp-servers/everything/echo' && c.status === 'success');
    expect(ok.map((c) => c.args_hash).sort()).toEqual(pythonArgsHashes(echoes).sort());
  }, 60_000);
});
