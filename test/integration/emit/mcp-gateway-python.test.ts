/**
 * The official Python MCP client (`mcp` on PyPI) through `tool-audit mcp`, over stdio and
 * Streamable HTTP, naming its task in `_meta["tool-audit/task_id"]`: every call is one stored
 * tool_call whose args_hash equals what Python's own json.dumps(sort_keys=True) hashes to
 * (Python writes 0.1 + 0.2, 1e-07 and 2.0 its way; the gateway must hash them that way too).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { filesystemServer, gatewayArgs, gatewayEnv, python, randomPort, root, serveForSuite, spawnListening, testServer, waitForCalls } from '../../helpers/mcp.ts';

const { served, running } = serveForSuite();

const client = join(root, 'test/integration/emit/python/mcp_client.py');
// Written as Python reads them: floats Python writes differently from JavaScript (1e-07, 2.0,
// 1e+16), an integer past 2^53 and -0 (an int to Python), non-ASCII text.
const SPECIAL = '{"key":"a"},{"key":"ü 日本","n":0.30000000000000004},{"key":"f","x":1e-07,"y":2.0,"z":1e+16},{"key":"big","i":12345678901234567890,"neg":-0}';
const PLAIN = Array.from({ length: 16 }, (_, i) => ({ key: `k${i}`, list: [i, i / 3, true, null] }));
const ARGS_TEXT = `[${SPECIAL},${JSON.stringify(PLAIN).slice(1)}`;
const KEYS = ['a', 'ü 日本', 'f', 'big', ...PLAIN.map((p) => p.key)];

async function runPython(mode: 'stdio' | 'http', task: string, target: string[], argsText = ARGS_TEXT): Promise<{ texts: Array<[string, boolean]>; hashes: string[] }> {
  const file = join(served.dir, `args-${task}.json`);
  writeFileSync(file, argsText);
  const { stdout } = await promisify(execFile)(python(), [client, mode, file, task, ...target], { env: gatewayEnv(served), timeout: 60_000 });
  return JSON.parse(stdout) as { texts: Array<[string, boolean]>; hashes: string[] };
}

describe('tool-audit mcp with the Python MCP client', () => {
  it('stdio: N calls are N tool_calls with Python’s args hashes, in the task _meta names', async () => {
    const task = `py-stdio-${randomUUID()}`;
    const out = await runPython('stdio', task, ['--', process.execPath, ...gatewayArgs([], testServer('stdio'))]);
    expect(out.texts).toEqual(KEYS.map((k) => [`value of ${k}`, false]));
    const calls = await waitForCalls(served, task, KEYS.length);
    expect(calls).toHaveLength(KEYS.length);
    expect(calls.map((c) => c.args_hash).sort()).toEqual([...out.hashes].sort());
  }, 90_000);

  it('stdio, the filesystem server: reads, a listing and a refused path, each one tool_call', async () => {
    const dir = mkdtempSync(join(served.dir, 'fs-'));
    writeFileSync(join(dir, 'a.txt'), 'alpha');
    const entries = [
      { tool: 'read_text_file', arguments: { path: join(dir, 'a.txt') } },
      { tool: 'list_directory', arguments: { path: dir } },
      { tool: 'get_file_info', arguments: { path: join(dir, 'a.txt') } },
      { tool: 'read_text_file', arguments: { path: '/etc/hostname' } },
    ];
    const task = `py-fs-${randomUUID()}`;
    const out = await runPython('stdio', task, ['--', process.execPath, ...gatewayArgs([], filesystemServer(dir))], JSON.stringify(entries));
    expect(out.texts[0]).toEqual(['alpha', false]);
    expect(out.texts[3]?.[1]).toBe(true); // outside the allowed directory
    const calls = await waitForCalls(served, task, entries.length);
    expect(calls.map((c) => [c.tool_id, c.status]).sort()).toEqual(
      [
        ['secure-filesystem-server/read_text_file', 'success'],
        ['secure-filesystem-server/list_directory', 'success'],
        ['secure-filesystem-server/get_file_info', 'success'],
        ['secure-filesystem-server/read_text_file', 'error'],
      ].sort(),
    );
    expect(calls.map((c) => c.args_hash).sort()).toEqual([...out.hashes].sort());
  }, 90_000);

  it('Streamable HTTP: the same', async () => {
    const upstream = randomPort();
    running.push(await spawnListening(testServer('http', upstream), upstream));
    const port = randomPort();
    running.push(await spawnListening([process.execPath, join(root, 'bin/tool-audit.mjs'), 'mcp', '--upstream', `http://127.0.0.1:${upstream}/mcp`, '--listen', String(port)], port, gatewayEnv(served)));
    const task = `py-http-${randomUUID()}`;
    const out = await runPython('http', task, [`http://127.0.0.1:${port}/mcp`]);
    const calls = await waitForCalls(served, task, KEYS.length);
    expect(calls).toHaveLength(KEYS.length);
    expect(calls.map((c) => c.args_hash).sort()).toEqual([...out.hashes].sort());
    expect(new Set(calls.map((c) => c.tool_id))).toEqual(new Set(['audit-test-server/lookup']));
  }, 90_000);
});
