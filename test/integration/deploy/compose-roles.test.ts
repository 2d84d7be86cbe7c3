/**
 * The compose stack's processes, each under the grants its ClickHouse user gets from
 * deploy/clickhouse/initdb: `migrate` as the admin, then `ingest`, `analyze` and `serve` (the
 * `api` service: Kafka, no in-process worker, no analyzer) one after the other on one embedded
 * data directory, each started by the CLI with a ClickHouse configuration whose user holds
 * exactly that role's grants (CLICKHOUSE_EMBEDDED_CONFIG; see test/helpers/embedded-grants.ts).
 * Each goes through start-up and its real work — ingest a packet of every type (a hint and a
 * quarantined one included), every analyzer job, the API's reads, a manifest PUT, an MCP report,
 * a budget apply and check, the dedup indexer — with no job failing and no error logged, and
 * stops with status 0. What was done is checked through the API afterwards.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { grantsConfig, roleGrants } from '../../helpers/embedded-grants.ts';
import { brokers, createTopics, eventually, groupLag, produceAll, testKafka, uniqueNames } from '../../helpers/kafka.ts';
import { dependency, outputArtifact, toolCall } from '../../helpers/packets.ts';
import { grants, runInitScript, TEST_ENV } from '../../unit/deploy/users-sql.ts';
import { testPort } from '../../helpers/ports.ts';

const root = new URL('../../../', import.meta.url).pathname;
const DB = 'compose_roles';
const ADMIN = 'admin-key-0123456789abcdef';
const INGEST = 'ingest-key-0123456789abcd';
const script = runInitScript({ ...TEST_ENV, CLICKHOUSE_DB: DB });
// On the embedded engine the process is also the server: before it exits it stops merges and wakes
// the cleanup threads (platform/clickhouse/part-cleanup.ts), which a ClickHouse server does by itself
// (there the step is skipped). Those two grants stand for the server's own housekeeping.
const HOUSEKEEPING = [`GRANT SYSTEM MERGES ON ${DB}.*`, `GRANT SYSTEM CLEANUP ON ${DB}.*`];
const configOf = (user: string) => grantsConfig([...roleGrants(grants(script.sql), user), ...HOUSEKEEPING]);

interface Proc {
  port: number;
  /** Sends SIGTERM; resolves with the exit status. */
  /** SIGTERM, then the exit code (or the name of the signal that ended the process). */
  stop(): Promise<number | string | null>;
  /** Log lines at level error or fatal (pino levels ≥ 50; not kafkajs's rebalance notices), and lines that are not JSON. */
  errors(): string[];
}

function start(command: string, env: Record<string, string>): Proc {
  const port = testPort();
  const child = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), command], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  // A process ended by a signal resolves with the signal's name, so a failed stop says which.
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  return {
    port,
    stop: () => (child.exitCode === null && child.kill('SIGTERM'), exited),
    errors: () =>
      out
        .split('\n')
        .filter(Boolean)
        .filter((l) => {
          try {
            const line = JSON.parse(l) as { level: number; component?: string; error?: string };
            // kafkajs logs a consumer group's normal rebalance at error level.
            return line.level >= 50 && !(line.component === 'kafkajs' && /rebalancing/.test(line.error ?? ''));
          } catch {
            return true;
          }
        }),
  };
}

async function get(port: string | number, path: string, key = INGEST): Promise<{ status: number; body: unknown; text: string }> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await r.text();
  return { status: r.status, text, body: text.startsWith('{') ? JSON.parse(text) : text };
}

/** GET that must answer 200; its JSON body. */
async function read(port: number, path: string): Promise<unknown> {
  const r = await get(port, path);
  expect(r.status, `${path}: ${r.text.slice(0, 500)}`).toBe(200);
  return r.body;
}

async function send(port: number, method: string, path: string, body: string, type: string, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { method, body, headers: { authorization: `Bearer ${key}`, 'content-type': type } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** Jobs of a process that have run to the end at least once, and jobs that ever failed (from /metrics). */
async function jobRuns(port: number): Promise<{ ok: string[]; failed: string[] }> {
  const text = (await get(port, '/metrics')).text;
  const jobs = (re: RegExp) => [...text.matchAll(re)].map((m) => m[1] ?? '');
  return { ok: jobs(/^tool_audit_job_last_success_seconds\{job="([^"]+)"\} [1-9]/gm), failed: jobs(/^tool_audit_job_failures_total\{job="([^"]+)"\}/gm) };
}

const stopped: Proc[] = [];
afterAll(async () => {
  await Promise.all(stopped.map((p) => p.stop()));
});

describe('the compose stack, each process under its ClickHouse role', () => {
  it('migrate (admin), then ingest, analyze and the API each do their work under their grants alone', async () => {
    expect(script.status, script.stderr).toBe(0);
    const names = uniqueNames('roles');
    const kafka = testKafka();
    await createTopics(kafka, [
      { topic: names.topic, partitions: 2 },
      { topic: names.dlqTopic, partitions: 1 },
    ]);
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      TOOL_AUDIT_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'ta-roles-')), 'data'),
      CLICKHOUSE_DATABASE: DB,
      KAFKA_BROKERS: brokers().join(','),
      KAFKA_TOPIC: names.topic,
      KAFKA_DLQ_TOPIC: names.dlqTopic,
      KAFKA_GROUP_ID: names.groupId,
      KAFKA_TOPIC_PARTITIONS: '2',
      TOOL_AUDIT_API_KEYS: `${ADMIN}:admin;${INGEST}:ingest,read`,
      LOG_LEVEL: 'warn',
      MIGRATE_ON_START: 'false',
    };
    await promisify(execFile)(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'migrate'], { env: base });

    // One packet of each type, and one that breaks I5 (quarantined): created a minute ago.
    const at = (ms: number) => new Date(Date.now() - 60_000 + ms).toISOString();
    const task = `roles-${randomUUID()}`;
    const first = toolCall({ created_at: at(0), tool_id: 'search_web' }, task);
    const second = toolCall({ created_at: at(2000), tool_id: 'python_execute' }, task);
    const failed = toolCall({ created_at: at(5000), tool_id: 'flaky', status: 'error', error: 'HTTP 503' }, task);
    const retried = toolCall({ created_at: at(6000), tool_id: 'flaky' }, task);
    const hintId = randomUUID();
    const packets = [
      first,
      second,
      outputArtifact(first.call_id, 'three results', 'text', { created_at: at(500) }),
      dependency({ task_id: task, preceding_call_id: first.call_id, succeeding_call_id: second.call_id, time_delta_ms: 2000 }),
      { type: 'optimization_hint', hint: { hint_id: hintId, kind: 'cache_candidate', tool_ids: ['search_web'], task_ids_sample: [task], evidence: { hits: 3 }, estimated_savings_ms: 100, estimated_savings_usd: 0.01, window_from: at(-3_600_000), window_to: at(0), created_at: at(0) } },
      toolCall({ created_at: at(3000), args_hash: '0'.repeat(64) }, task),
      // A failure retried: with HINTS_RETRY_THRESHOLD=0 the analyzer's hints job writes a retry_storm hint.
      failed,
      retried,
    ];
    await produceAll(kafka, names.topic, packets.map((p, i) => ({ key: String(i), value: JSON.stringify(p) })));

    const ingest = start('ingest', { ...base, CLICKHOUSE_EMBEDDED_CONFIG: configOf('tool_audit_ingest') });
    stopped.push(ingest);
    const admin = kafka.admin();
    await admin.connect();
    try {
      await eventually(async () => (await groupLag(admin, names.groupId, names.topic)) === 0, 90_000, 'ingest commits every packet');
    } finally {
      await admin.disconnect();
    }
    const ingestExit = await ingest.stop();
    expect(ingest.errors()).toEqual([]);
    expect(ingestExit).toBe(0);

    const analyze = start('analyze', { ...base, CLICKHOUSE_EMBEDDED_CONFIG: configOf('tool_audit_analyzer'), AUDIT_GRACE_MS: '0', ANALYZER_INTERVAL_MS: '200', AUDIT_INTERVAL_MS: '200', HINTS_INTERVAL_MS: '500', HINTS_RETRY_THRESHOLD: '0' });
    stopped.push(analyze);
    await expect.poll(async () => (await jobRuns(analyze.port).catch(() => ({ ok: [] as string[] }))).ok.sort(), { timeout: 90_000, interval: 300 }).toEqual(['audit log builder', 'auditor', 'dependency analyzer', 'hints']);
    expect((await jobRuns(analyze.port)).failed).toEqual([]);
    const analyzeExit = await analyze.stop();
    expect(analyze.errors()).toEqual([]);
    expect(analyzeExit).toBe(0);

    const api = start('serve', { ...base, CLICKHOUSE_EMBEDDED_CONFIG: configOf('tool_audit_api'), INGEST_WORKER_IN_PROCESS: 'false', ANALYZER_ENABLED: 'false', DEDUP_INDEX_INTERVAL_MS: '200' });
    stopped.push(api);
    await expect.poll(async () => (await get(api.port, '/readyz').catch(() => ({ status: 0 }))).status, { timeout: 90_000, interval: 300 }).toBe(200);
    const p = api.port;
    const view = (await read(p, `/v1/tasks/${task}`)) as { invocations: Array<{ call_id: string }>; outputs: Array<{ call_id: string }>; dependencies: Array<{ preceding_call_id: string; succeeding_call_id: string }> };
    expect(view.invocations.map((c) => c.call_id)).toEqual([first.call_id, second.call_id, failed.call_id, retried.call_id]);
    expect(view.outputs.map((o) => o.call_id)).toEqual([first.call_id]);
    expect(view.dependencies.map((d) => [d.preceding_call_id, d.succeeding_call_id])).toContainEqual([first.call_id, second.call_id]);
    const hints = ((await read(p, `/v1/hints?from=${encodeURIComponent(at(-86_400_000))}`)) as { hints: Array<{ hint_id: string; kind: string; tool_ids: string[] }> }).hints;
    expect(hints.map((h) => h.hint_id)).toContain(hintId);
    expect(hints.filter((h) => h.kind === 'retry_storm').map((h) => h.tool_ids)).toEqual([['flaky']]);
    expect(((await read(p, `/v1/quarantine?from=${encodeURIComponent(at(-86_400_000))}`)) as { records: unknown[] }).records).toHaveLength(1);

    // An output schema the stored text output breaks (M8), an approval none of the calls has (M9).
    const yaml = 'search_web:\n  tool_id: search_web\n  idempotent: true\n  requires_approval: true\n  output_schema: {type: object}\n';
    const manifest = await send(p, 'PUT', '/v1/manifests', yaml, 'application/yaml', ADMIN);
    expect(manifest).toMatchObject({ status: 200, body: { version: 1 } });
    const mcp = await send(p, 'POST', '/v1/mcp/tools', JSON.stringify({ server: 'fs', server_info: { name: 'fs', version: '1' }, tools: [{ name: 'read_file', inputSchema: { type: 'object' } }], seen_at: at(0) }), 'application/json', INGEST);
    expect(mcp).toMatchObject({ status: 200, body: { version: 2, added: ['fs/read_file'] } });
    expect(((await read(p, '/v1/manifests')) as { version: number; applied_by: string }).version).toBe(2);
    const budgets = await send(p, 'PUT', '/v1/budgets', JSON.stringify([{ budget_id: 'day', scope: { agent_id: 'L' }, period: 'day', limit_usd: 10, mode: 'deny' }]), 'application/json', ADMIN);
    expect(budgets.status).toBe(200);
    const check = await send(p, 'POST', '/v1/budget/check', JSON.stringify({ agent_id: 'L', tool_id: 'search_web', projected_cost_usd: 0.01 }), 'application/json', INGEST);
    expect(check).toMatchObject({ status: 200, body: { decision: 'allow' } });
    await expect.poll(async () => ((await read(p, '/v1/budget/decisions')) as { decisions: unknown[] }).decisions.length, { timeout: 20_000, interval: 500 }).toBe(1);
    const posted = await send(p, 'POST', '/v1/packets', JSON.stringify([toolCall({ created_at: at(4000) }, task)]), 'application/json', INGEST);
    expect(posted.status).toBeLessThan(300);
    await expect.poll(async () => (await jobRuns(p)).ok, { timeout: 30_000, interval: 300 }).toContain('dedup index refresh');
    expect((await jobRuns(p)).failed).toEqual([]);
    const apiExit = await api.stop();
    expect(api.errors()).toEqual([]);
    expect(apiExit).toBe(0);

    // The manifest rules under the analyzer's grants: M8 reads output contents (the first call's
    // text output), M9 the approvals (the first call; the one POSTed above waits in Kafka, no ingest runs).
    const again = start('analyze', { ...base, CLICKHOUSE_EMBEDDED_CONFIG: configOf('tool_audit_analyzer'), AUDIT_GRACE_MS: '0', ANALYZER_INTERVAL_MS: '200', AUDIT_INTERVAL_MS: '200', HINTS_INTERVAL_MS: '500' });
    stopped.push(again);
    const found = async (invariant: string) => {
      const text = (await get(again.port, '/metrics').catch(() => ({ text: '' }))).text;
      return Number(text.match(new RegExp(`^tool_audit_violations_total\\{invariant="${invariant}"\\} (\\d+)`, 'm'))?.[1] ?? 0);
    };
    await expect.poll(async () => [await found('M8'), await found('M9')], { timeout: 60_000, interval: 300 }).toEqual([1, 1]);
    expect((await jobRuns(again.port)).failed).toEqual([]);
    const againExit = await again.stop();
    expect(again.errors()).toEqual([]);
    expect(againExit).toBe(0);
  }, 300_000);
});
