/**
 * Args read back exactly (lossless reads), judged by Python's own json: a Python script posts calls
 * whose args it wrote (1.0, 1e16, -0.0, integers past 2^53, non-ASCII) with hashes it computed,
 * then reads every read path that returns args, and the CLI's `task --json` answer (straight on
 * ClickHouse and through the server), and recomputes sha256(json.dumps(args, sort_keys=True)).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { createHttpReadQueries } from '../../../api/read-client.ts';
import { MAX_TIME_MS } from '../../../api/read-params.ts';
import { taskJson } from '../../../cli/task.ts';
import { createSegmentWriter } from '../../../ingest/segment-writer.ts';
import { silentLogger } from '../../../platform/logger.ts';
import { MetricsRegistry } from '../../../platform/metrics.ts';
import { createReadQueries, type ReadQueries } from '../../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { doorOf, freshDatabase } from '../../helpers/clickhouse.ts';
import { BOTH_KEY, KEYS } from '../../helpers/read-harness.ts';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, 'python', 'lossless_args.py');
const python = (...args: string[]) => run('python3', [SCRIPT, ...args], { timeout: 120_000 });

let app: FastifyInstance;
let url: string;
let direct: ReadQueries;
let dir: string;

beforeAll(async () => {
  const { ch, db } = await freshDatabase('lossless');
  const metrics = new MetricsRegistry();
  const writer = createSegmentWriter({ clickhouse: doorOf(ch, db), maxPacketBytes: 1 << 20, dedupCacheEntries: 100, metrics, logger: silentLogger() });
  direct = createReadQueries(doorOf(ch, db), db, DEFAULT_QUERY_CONTEXT);
  app = buildApp({
    ingest: { submit: (p) => writer.write(p) },
    read: { queries: direct, defaults: { windowDays: 90, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 }, rateLimit: { perMinute: 0, burst: 1 } },
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    apiKeys: KEYS,
    maxBodyBytes: 1 << 20,
    logger: silentLogger(),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'tool-audit-test-lossless-'));
});
afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('args read back exactly, judged by Python json', () => {
  it('every read path and the CLI answer args that re-hash to args_hash, and summaries as sent', async () => {
    const sent = (await python('post', url, BOTH_KEY)).stdout.trim();
    const { task } = JSON.parse(sent) as { task: string };
    const window = { fromMs: 0, toMs: MAX_TIME_MS };
    const viaServer = createHttpReadQueries({ url, apiKey: BOTH_KEY });
    const files = [];
    for (const [name, queries] of [['cli-direct', direct], ['cli-url', viaServer]] as const) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, taskJson(await queries.task({ taskId: task, window, limit: 1000 })));
      files.push(file);
    }
    const checked = await python('check', url, BOTH_KEY, sent, ...files).then(
      (r) => JSON.parse(r.stdout) as { checked: Record<string, number>; problems: unknown[] },
      (err: { stdout?: string; stderr?: string }) => ({ checked: {}, problems: [err.stdout || err.stderr] }),
    );
    expect(checked.problems).toEqual([]);
    expect(Object.keys(checked.checked)).toHaveLength(8); // six HTTP read paths and two CLI answers
    expect(Object.values(checked.checked).every((n) => n >= 2)).toBe(true);
  });
});
