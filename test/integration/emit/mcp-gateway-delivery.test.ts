/**
 * Where the gateway delivers, and what happens when it cannot: with KAFKA_BROKERS (and no
 * TOOL_AUDIT_URL) every call is a tool_call packet on the topic, keyed by its task, read back
 * from the real broker; with the tool-audit server away, calls still work at once and what was
 * not delivered is counted in the gateway's closing stats line.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { brokers, createTopics, readTopic, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { gatewayArgs, pythonArgsHashes, testServer } from '../../helpers/mcp.ts';

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'TOOL_AUDIT_URL' && k !== 'KAFKA_BROKERS') env[k] = v;
  return env;
}

async function run(env: Record<string, string>, task: string, args: Array<Record<string, unknown>>): Promise<{ stderr: string; ms: number[] }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: gatewayArgs(['--task-id', task], testServer('stdio')), env: { ...env, LOG_LEVEL: 'info' }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const client = new Client({ name: 'delivery-test', version: '1.0.0' });
  await client.connect(transport);
  const ms: number[] = [];
  for (const a of args) {
    const t0 = performance.now();
    expect(await client.callTool({ name: 'lookup', arguments: a })).toMatchObject({ content: [{ type: 'text', text: `value of ${String(a.key)}` }] });
    ms.push(performance.now() - t0);
  }
  await client.close();
  await new Promise((r) => setTimeout(r, 200));
  return { stderr, ms };
}

describe('gateway delivery', () => {
  it('KAFKA_BROKERS: one tool_call packet per call on the topic, keyed by the task', async () => {
    const { topic } = uniqueNames('mcp-gw');
    const kafka = testKafka('mcp-gateway-test');
    await createTopics(kafka, [{ topic, partitions: 3 }]);
    const task = randomUUID();
    const args = Array.from({ length: 12 }, (_, i) => ({ key: `k${i}`, x: i / 7 }));
    await run({ ...baseEnv(), KAFKA_BROKERS: brokers().join(','), KAFKA_TOPIC: topic }, task, args);

    const consumer = kafka.consumer({ groupId: `${topic}-reader` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: Array<{ key: string; packet: { type: string; invocation?: { task_id: string; args_hash: string; tool_id: string } } }> = [];
    await consumer.run({ eachMessage: async ({ message }) => void seen.push({ key: message.key?.toString() ?? '', packet: JSON.parse(message.value?.toString() ?? '{}') }) });
    const end = Date.now() + 20_000;
    while (seen.filter((s) => s.packet.type === 'tool_call').length < args.length && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 500));
    await consumer.disconnect();
    const calls = seen.filter((s) => s.packet.type === 'tool_call');
    expect(calls).toHaveLength(args.length);
    expect(new Set(calls.map((c) => c.key))).toEqual(new Set([task]));
    expect(calls.map((c) => c.packet.invocation?.args_hash).sort()).toEqual(pythonArgsHashes(args).sort());
  }, 60_000);

  it('redacts by default: without REDACTION_KEY a secret leaves as the placeholder of the key kept in its state folder', async () => {
    const { topic } = uniqueNames('mcp-gw-red');
    const kafka = testKafka('mcp-gateway-redaction-test');
    await createTopics(kafka, [{ topic, partitions: 1 }]);
    const dataDir = join(mkdtempSync(join(tmpdir(), 'mcp-gw-state-')), 'data');
    const env = { ...baseEnv(), KAFKA_BROKERS: brokers().join(','), KAFKA_TOPIC: topic, TOOL_AUDIT_DATA_DIR: dataDir };
    delete (env as Record<string, string | undefined>).REDACTION_KEY;
    delete (env as Record<string, string | undefined>).REDACTION;
    const secret = 'hunter2-Correct-Horse';
    const aws = 'AKIAIOSFODNN7EXAMPLE';
    const { stderr } = await run(env, randomUUID(), [{ key: 'k1', password: secret, note: `rotate ${aws}` }]);
    // The key it made, read back as a file: the placeholder is computed here from it.
    const key = readFileSync(join(dataDir, 'tool-audit-state', 'redaction.key'), 'utf8').trim();
    expect(key.length).toBeGreaterThanOrEqual(32);
    expect(stderr).toContain('redacting with the key kept in the state folder');
    const mark = (rule: string, s: string) => `[redacted:${rule}:${createHmac('sha256', key).update(s).digest('hex').slice(0, 16)}]`;
    // The call and its output.
    const values = (await readTopic(topic, { atLeast: 2 })).map((r) => r.value);
    const call = values.map((v) => JSON.parse(v) as { type: string; invocation?: { args: Record<string, string> } }).find((p) => p.type === 'tool_call');
    expect(call?.invocation?.args).toEqual({ key: 'k1', password: mark('secret_name', secret), note: `rotate ${mark('aws_access_key', aws)}` });
    for (const v of values) for (const s of [secret, aws]) expect(v).not.toContain(s);
  }, 60_000);

  it('the tool-audit server away: calls are not held up; the undelivered are counted', async () => {
    const args = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}` }));
    const { stderr, ms } = await run({ ...baseEnv(), TOOL_AUDIT_URL: 'http://127.0.0.1:9' }, randomUUID(), args);
    // Each call answered as fast as with a sink: delivery is in the background.
    expect(Math.max(...ms.slice(2))).toBeLessThan(500);
    const line = stderr.split('\n').find((l) => l.includes('mcp gateway stopped'));
    expect(line, stderr).toBeDefined();
    const stats = JSON.parse(line as string) as { emitter: { enqueued: number; delivered: number; dropped: number; buffered: number } };
    expect(stats.emitter.enqueued).toBe(40); // a tool_call and an output_artifact per call
    expect(stats.emitter.delivered).toBe(0);
    expect(stats.emitter.dropped + stats.emitter.buffered).toBe(40);
  }, 60_000);
});
