/**
 * Tool definitions through the gateway, end to end: the server's tools/list becomes a manifest
 * version tagged with the server; a tool the server silently redefines (its description
 * changes after approval) is a new version and one `tool_definition_changed` finding, reported
 * once however often the list is read again; and with `--pin-manifest` the gateway refuses a
 * tool nobody pinned, and the redefined tool, before the server sees either call.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { gatewayArgs, gatewayEnv, INGEST_KEY, serveForSuite, testServer, waitForCalls } from '../../helpers/mcp.ts';

const { served } = serveForSuite();

const get = async <T>(path: string): Promise<T> => (await (await fetch(`${served.url}${path}`, { headers: { authorization: `Bearer ${INGEST_KEY}` } })).json()) as T;

async function connect(flags: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: gatewayArgs(flags, testServer('stdio')), env: gatewayEnv(served), stderr: 'inherit' });
  const client = new Client({ name: 'definitions-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

interface Servers {
  servers: Array<{ server: string; definition_changes: number; tools: Array<{ tool_id: string; versions: number; removed: boolean }> }>;
}

describe('tool definitions through the gateway', () => {
  it('a redefinition after approval is a new manifest version and one finding', async () => {
    const client = await connect(['--task-id', randomUUID()]);
    const first = (await client.listTools()).tools;
    expect(first.find((t) => t.name === 'lookup')?.description).toBe('looks a key up');
    await expect.poll(async () => (await get<Servers>('/v1/mcp/servers')).servers.map((s) => s.server), { timeout: 10_000 }).toEqual(['audit-test-server']);
    const manifest = await get<{ version: number; tools: Record<string, { mcp: { server: string; tool: string } | null; idempotent: boolean; accesses_private_data: boolean }> }>('/v1/manifests');
    expect(manifest.tools['audit-test-server/noop']).toMatchObject({ mcp: { server: 'audit-test-server', tool: 'noop' }, idempotent: true, accesses_private_data: true });
    const v1 = manifest.version;

    await client.callTool({ name: 'redefine', arguments: {} });
    for (let i = 0; i < 3; i++) await client.listTools(); // the change, then the same list twice
    await client.close();

    const findings = async () => (await get<{ violations: Array<{ invariant: string; ids: string[]; detail: string }> }>('/v1/violations?invariant=MCP')).violations;
    await expect.poll(async () => (await findings()).length, { timeout: 10_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 1_000)); // the repeated lists had time to arrive too
    const [finding] = await findings();
    expect(finding?.ids).toEqual(['audit-test-server/lookup']);
    expect(JSON.parse(finding?.detail ?? '{}')).toMatchObject({ server: 'audit-test-server', tool: 'lookup', fields: ['description'] });
    const servers = await get<Servers>('/v1/mcp/servers');
    expect(servers.servers[0]?.definition_changes).toBe(1);
    expect(servers.servers[0]?.tools.find((t) => t.tool_id === 'audit-test-server/lookup')?.versions).toBe(2);
    const after = await get<{ version: number }>('/v1/manifests');
    expect(after.version).toBe(v1 + 1);
  }, 60_000);

  it('--pin-manifest refuses a tool not pinned and a redefined one; the server never runs them', async () => {
    const probe = await connect(['--task-id', randomUUID()]);
    const tools = (await probe.listTools()).tools.filter((t) => t.name !== 'extra');
    await probe.close();
    const pinFile = join(served.dir, 'pin.json');
    writeFileSync(pinFile, JSON.stringify({ tools }));

    const task = randomUUID();
    const client = await connect(['--task-id', task, '--pin-manifest', pinFile]);
    await client.listTools();
    expect(await client.callTool({ name: 'lookup', arguments: { key: 'k' } })).toMatchObject({ content: [{ type: 'text', text: 'value of k' }] });
    const notPinned = await client.callTool({ name: 'extra', arguments: {} }).catch((e: unknown) => e);
    expect(notPinned).toBeInstanceOf(McpError);
    expect((notPinned as McpError).code).toBe(-32051);
    await client.callTool({ name: 'redefine', arguments: {} });
    await client.listTools();
    const redefined = await client.callTool({ name: 'lookup', arguments: { key: 'k' } }).catch((e: unknown) => e);
    expect((redefined as McpError).code).toBe(-32052);
    expect((redefined as McpError).message).toMatch(/redefined since it was pinned/);
    await client.close();
    // Only the two calls that ran are tool_calls.
    const calls = await waitForCalls(served, task, 2);
    await new Promise((r) => setTimeout(r, 500));
    expect((await waitForCalls(served, task, 3, 500)).map((c) => c.tool_id).sort()).toEqual(['audit-test-server/lookup', 'audit-test-server/redefine']);
    expect(calls).toHaveLength(2);
  }, 60_000);

  it('a pin fails closed: with no tools/list from the client, the gateway lists the live definitions itself, and again after list_changed', async () => {
    const probe = await connect(['--task-id', randomUUID()]);
    const tools = (await probe.listTools()).tools.filter((t) => t.name !== 'extra');
    await probe.close();
    const pinFile = join(served.dir, 'pin-closed.json');
    writeFileSync(pinFile, JSON.stringify({ tools }));

    // A client that reuses a list it cached: it never asks tools/list through the gateway.
    const client = await connect(['--task-id', randomUUID(), '--pin-manifest', pinFile]);
    const stray: unknown[] = [];
    client.onerror = (err) => stray.push(err);
    expect(await client.callTool({ name: 'lookup', arguments: { key: 'k' } })).toMatchObject({ content: [{ type: 'text', text: 'value of k' }] });
    // The server redefines lookup and says so (notifications/tools/list_changed); the client lists nothing.
    await client.callTool({ name: 'redefine', arguments: {} });
    const redefined = await client.callTool({ name: 'lookup', arguments: { key: 'k' } }).catch((e: unknown) => e);
    expect((redefined as McpError).code).toBe(-32052);
    // The gateway's own list answers never reached the client (the SDK reports a response it did not ask for).
    expect(stray).toEqual([]);
    await client.close();
  }, 60_000);
});
