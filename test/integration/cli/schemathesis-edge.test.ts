/**
 * The edge against a real fuzzer holding a wrong key: `tool-audit serve` (embedded ClickHouse, API
 * keys set, AUTH_FAILURES_PER_MINUTE=10) and schemathesis generating requests for every operation
 * of /openapi.json with `Authorization: Bearer <a key that is not one>`, recorded as HAR. Oracles
 * read off the recording: at most as many 401s as the failures the limit lets through in the run's
 * time, every later request 429 with Retry-After, and no answer body with SQL or ClickHouse's text.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { python, root } from '../../helpers/mcp.ts';
import { testPort } from '../../helpers/ports.ts';
import { seedDataDir } from '../../helpers/data-template.ts';

const KEY = 'schemathesis-read-key-0123456789';
const PER_MINUTE = 10;
const schemathesis = join(dirname(python()), 'schemathesis');

interface HarEntry {
  startedDateTime: string;
  request: { method: string; url: string };
  response: { status: number; headers: Array<{ name: string; value: string }>; content: { text?: string } };
}

async function up(url: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fetch(url).then((r) => r.ok, () => false))) {
    if (Date.now() > end) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!existsSync(schemathesis))('schemathesis with a wrong key', () => {
  it('is answered 401 only as often as the limit allows, then 429 on every route, and never with SQL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tool-audit-fuzz-'));
    const port = testPort();
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: join(dir, 'data'), TOOL_AUDIT_API_KEYS: `${KEY}:read`, AUTH_FAILURES_PER_MINUTE: String(PER_MINUTE), LOG_LEVEL: 'warn' };
    delete env.KAFKA_BROKERS;
    delete env.CLICKHOUSE_URL;
    await seedDataDir(env.TOOL_AUDIT_DATA_DIR as string);
    const serve = spawn(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => serve.on('exit', resolve));
    const har = join(dir, 'run.har');
    try {
      await up(`http://127.0.0.1:${port}/readyz`, 60_000);
      const started = Date.now();
      // Exit status is schemathesis' verdict on the API's conformance, not ours: the HAR is read.
      await promisify(execFile)(
        schemathesis,
        ['run', `http://127.0.0.1:${port}/openapi.json`, '-H', 'Authorization: Bearer not-a-key-of-this-server-0000', '--phases', 'examples,coverage', '--max-examples', '3', '--workers', '1', '--checks', 'not_a_server_error', '--max-time', '40', '--report', 'har', '--report-har-path', har, '--seed', '1'],
        { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000, maxBuffer: 64 << 20 },
      ).catch((err: { code?: number }) => {
        if (typeof err.code !== 'number') throw err;
      });
      const seconds = (Date.now() - started) / 1000;
      const entries = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: HarEntry[] } }).log.entries;
      const statuses = entries.map((e) => e.response.status);
      expect(entries.length).toBeGreaterThan(50);
      // The limit's tokens: PER_MINUTE at once, one more every 60 / PER_MINUTE s.
      const allowed = PER_MINUTE + Math.ceil(seconds / (60 / PER_MINUTE));
      const unauthorized = statuses.filter((s) => s === 401).length;
      expect(unauthorized).toBeGreaterThan(0);
      expect(unauthorized).toBeLessThanOrEqual(allowed);
      const limited = entries.filter((e) => e.response.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(entries.length - allowed - statuses.filter((s) => s !== 401 && s !== 429).length);
      for (const e of limited) {
        expect(Number(e.response.headers.find((h) => h.name.toLowerCase() === 'retry-after')?.value)).toBeGreaterThanOrEqual(1);
        expect(JSON.parse(e.response.content.text ?? '{}')).toMatchObject({ error: 'too_many_requests' });
      }
      // Nothing but the edge answered: no data, no 5xx, and no engine text in any body.
      expect(statuses.filter((s) => s === 200 || s >= 500)).toEqual([]);
      for (const e of entries) expect(e.response.content.text ?? '', `${e.request.method} ${e.request.url}`).not.toMatch(/SELECT|\{db:Identifier\}|DB::Exception|Code: \d+|clickhouse/i);
    } finally {
      serve.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
