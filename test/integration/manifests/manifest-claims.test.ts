/**
 * Manifest versions across processes (migration 025, analyzers/manifest-claims.ts): two doors are
 * two processes (each has its own apply queue), applying at once. The oracle: every apply gets a
 * number of its own, and the version stored under that number is exactly the manifest that apply
 * sent (read back whole), with who applied it; a claim whose apply died is skipped once stale.
 */
import { describe, expect, it } from 'vitest';
import { applyManifest, loadManifestHistory } from '../../../analyzers/manifest-store.ts';
import { STALE_CLAIM_MS } from '../../../analyzers/manifest-claims.ts';
import { createClickHouseDoor } from '../../../platform/clickhouse/door.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../../queries/sql.ts';
import { parseManifest, type Manifest } from '../../../schemas/tool-manifest.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';

function manifest(tools: string[]): Manifest {
  const r = parseManifest(Object.fromEntries(tools.map((t) => [t, { tool_id: t }])));
  if (!r.ok) throw new Error(r.errors.join('; '));
  return r.manifest;
}

describe('manifest versions across processes', () => {
  it('gives every one of concurrent applies from two processes its own version, stored whole, with who applied it', async () => {
    const { ch, db } = await freshDatabase('mc');
    const a = createClickHouseDoor(ch, db);
    const b = createClickHouseDoor(ch, db);
    const sent = Array.from({ length: 6 }, (_, i) => ({ door: i % 2 ? b : a, by: i % 2 ? 'key-b' : 'key-a', tools: Array.from({ length: 1 + i }, (_, j) => `p${i}_tool${j}`) }));
    const applied = await Promise.all(sent.map((s) => applyManifest(s.door, manifest(s.tools), Date.now(), s.by)));
    const versions = applied.map((x) => x.version);
    expect(new Set(versions).size).toBe(sent.length);
    const history = await loadManifestHistory(a, db, DEFAULT_QUERY_CONTEXT);
    for (const [i, s] of sent.entries()) {
      const stored = history.versions.find((v) => v.version === versions[i]);
      expect(Object.keys(stored?.manifest ?? {}).sort(), `apply ${i}`).toEqual([...s.tools].sort());
      expect(stored?.appliedBy).toBe(s.by);
      expect(applied[i]?.applied_by).toBe(s.by);
    }
    // Versions take effect in number order, and the current one is the highest number.
    const ordered = [...history.versions].sort((x, y) => x.version - y.version);
    expect(ordered.map((v) => v.effectiveMs)).toEqual([...ordered.map((v) => v.effectiveMs)].sort((x, y) => x - y));
    expect(history.current?.version).toBe(Math.max(...versions));
  }, 60_000);

  it('skips the number of a claim whose apply died, once the claim is stale', async () => {
    const { ch, db, door } = await freshDatabase('mc');
    await applyManifest(door, manifest(['one']), Date.now(), 'key-a');
    // A claim for version 2 that nobody writes, made almost STALE_CLAIM_MS ago.
    await ch.command({
      query: `INSERT INTO {db:Identifier}.manifest_claims (version, apply_id, claimed_at, applied_by) VALUES (2, generateUUIDv4(), now64(6) - toIntervalMillisecond({ago:UInt32}), 'dead')`,
      query_params: { db, ago: STALE_CLAIM_MS - 1500 },
    });
    const started = Date.now();
    const r = await applyManifest(door, manifest(['two']), Date.now(), 'key-b');
    expect(r.version).toBe(3);
    expect(Date.now() - started).toBeGreaterThan(1000); // it waited for the claim to go stale
    const history = await loadManifestHistory(door, db, DEFAULT_QUERY_CONTEXT);
    expect(history.versions.map((v) => [v.version, Object.keys(v.manifest)])).toEqual([
      [1, ['one']],
      [3, ['two']],
    ]);
  }, 60_000);
});
