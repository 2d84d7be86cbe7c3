/**
 * The auditor's memory does not depend on how many rows break a rule: a million calls
 * that each break I4 (and all but one I11) are audited by a process whose JavaScript heap is
 * capped at 64 MB, and every violation is recorded, once. The data is made and checked in other
 * processes (chDB admits one process per data directory), the oracle from the rows themselves.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createClickHouse } from '../../../platform/clickhouse/client.ts';
import { rows } from '../../helpers/clickhouse.ts';

const PROBE = fileURLToPath(new URL('./auditor-heap-probe.ts', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const N = 1_000_000;

function probe(args: object, heapMb?: number): Record<string, unknown> {
  const flags = heapMb ? [`--max-old-space-size=${heapMb}`] : [];
  const r = spawnSync(process.execPath, [...flags, '--import', 'tsx', PROBE, JSON.stringify(args)], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`probe ${JSON.stringify(args)} exited ${r.status ?? r.signal}: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
}

describe('auditor under a small heap', () => {
  it('records a million I4 and a million I11 violations with a 64 MB heap, each once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'ta-audit-heap-'));
    const db = 'heap';
    probe({ dataDir, db, phase: 'fill', n: N });
    const run = probe({ dataDir, db, phase: 'audit' }, 64) as { result: { recorded: number }; ms: number; metric: Record<string, number>; heapMb: number };

    const ch = await createClickHouse({ url: undefined, user: undefined, password: undefined, dataDir, database: 'unused' });
    try {
      const one = async (sql: string) => Number((await rows<{ c: string }>(ch, sql, { db }))[0]?.c);
      const i4Oracle = await one("SELECT count() AS c FROM {db:Identifier}.tool_invocations WHERE status != 'success' AND error IS NULL");
      expect(i4Oracle).toBe(N);
      const i4 = await one("SELECT count() AS c FROM {db:Identifier}.violations WHERE invariant = 'I4'");
      const i11 = await one("SELECT count() AS c FROM {db:Identifier}.violations WHERE invariant = 'I11'");
      expect(i4).toBe(i4Oracle);
      expect(i11).toBe(N - 1); // every call of the stream but its first went back in time
      expect(await one('SELECT count() - uniqExact(violation_key) AS c FROM {db:Identifier}.violations')).toBe(0);
      expect(run.result.recorded).toBe(i4 + i11);
      expect(run.metric).toEqual({ I4: i4, I11: i11 });
      console.log(`audit of ${N} calls: ${run.ms} ms, heap at the end ${run.heapMb} MB`);
    } finally {
      await ch.close();
    }
  }, 180_000);
});
