/**
 * `tool-audit manifests apply` and `tool-audit cache`: a manifest file reaches a running server
 * through PUT with its schema paths inlined; a bad one is refused by the command naming every
 * error before anything is contacted; the cache table renders what the API answers.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createHttpReadQueries } from '../../../api/read-client.ts';
import { formatTtl, parseTtl, renderCache } from '../../../cli/cache.ts';
import { loadManifestFiles } from '../../../cli/manifest-files.ts';
import { putManifest } from '../../../cli/manifests.ts';
import { freshDatabase } from '../../helpers/clickhouse.ts';
import { insertCalls, rawCall } from '../../helpers/raw-calls.ts';
import type { ApiKey } from '../../../platform/config.ts';
import { readApp } from '../../helpers/read-app.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ADMIN = 'admin-key-0123456789abcdef';
const READ = 'read-key-0123456789abcdef0';

describe('manifests apply and cache commands', () => {
  it('applies examples/manifest.yaml over HTTP and renders the cache table from the API', async () => {
    const { ch, db, door } = await freshDatabase('clim');
    const keys: ApiKey[] = [
      { key: ADMIN, scopes: ['admin'] },
      { key: READ, scopes: ['read'] },
    ];
    const app = readApp({ door, db, keys, manifests: {} });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const loaded = loadManifestFiles(join(ROOT, 'examples/manifest.yaml'));
      if (!loaded.ok) throw new Error(loaded.errors.join('; '));
      await expect(putManifest(url, READ, loaded.manifest)).rejects.toMatchObject({ code: 'SERVER_REFUSED' });
      expect(await putManifest(url, ADMIN, loaded.manifest)).toMatchObject({ version: 1, tools: Object.keys(loaded.manifest).length });
      const t = Date.now() - 600_000;
      const args = { query: 'x' };
      await insertCalls(ch, db, [rawCall({ tool_id: 'search_web', t, args, cost_usd: 0.005 }), rawCall({ tool_id: 'search_web', t: t + 5000, args, duration_ms: 1500, cost_usd: 0.005 })], Date.now());
      const q = createHttpReadQueries({ url, apiKey: READ });
      const window = { fromMs: t - 1000, toMs: t + 60_000 };
      const sim = await q.cacheSimulation({ window });
      expect((await q.manifest({})).tools.search_web?.input_schema).toMatchObject({ required: ['query'] });
      const text = renderCache(sim, await q.ttlCurve({ toolId: 'search_web', window }));
      expect(text).toMatch(/^search_web\s+1h\s+yes\s+2\s+1\s+50\.0%\s+1\.5 s\s+\$0\.01$/m);
      expect(text).toMatch(/suggested TTL: 1m/);
    } finally {
      await app.close();
    }
  });

  it('refuses a bad manifest file naming every error, exit 1, nothing contacted', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bad-manifest-'));
    writeFileSync(join(dir, 'm.yaml'), 'a:\n  tool_id: b\n  idempotent: maybe\n');
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/tool-audit.mjs'), 'manifests', 'apply', join(dir, 'm.yaml'), '--url', 'http://127.0.0.1:9'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/refused, nothing applied/);
    expect(r.stderr).toMatch(/a\.tool_id: is "b"/);
    expect(r.stderr).toMatch(/a\.idempotent/);
  });

  it('parses and prints TTLs', () => {
    expect([parseTtl('5m'), parseTtl('90s'), parseTtl('1h'), parseTtl('7d'), parseTtl('1500ms'), parseTtl('250'), parseTtl('5 minutes'), parseTtl('-1m')]).toEqual([300_000, 90_000, 3_600_000, 604_800_000, 1500, 250, undefined, undefined]);
    expect([formatTtl(300_000), formatTtl(3_600_000), formatTtl(90_000), formatTtl(1500), formatTtl(null)]).toEqual(['5m', '1h', '90s', '1500ms', '-']);
  });
});
