/**
 * `npm run bench:search`: GET /v1/search on the bench:history database, as the route
 * runs it (the read queries on the door serve opens), over the whole history's window:
 *  - a rare term (one call's own token, a different call each time),
 *  - a common term with limit 50 (`popular`: ~12 % of the calls' args),
 *  - a phrase (`"popular N"`, a few hundred calls each),
 * p50 / p95 / p99 of `--runs` searches each; the text indexes' build time on the stored history
 * (each cleared and materialized again, waited for) and their size against the tables they index.
 *
 *   npm run bench:search -- [--invocations 10000000] [--data-dir ./.bench-data/history] [--runs 30] [--copy link] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createReadQueries } from '../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';
import { runBench } from '../bench-process.ts';
import { openHistoryCopy } from '../history/history-copy.ts';
import { historyShapeOf, historyShapeOptions } from '../history/history-db.ts';
import { quantile } from '../stats.ts';

const { values: opt } = parseArgs({ options: { ...historyShapeOptions('10000000'), copy: { type: 'string', default: 'link' }, runs: { type: 'string', default: '30' }, json: { type: 'string' } } });
const shape = historyShapeOf(opt);
const log = (s: string) => process.stderr.write(`[bench:search] ${s}\n`);

async function main(): Promise<void> {
  const { meta, door } = await openHistoryCopy({ dataDir: opt['data-dir'] as string, shape, copy: opt.copy, log });
  // The indexes' build over the stored history, timed: each cleared and built again, one at a
  // time, waited for (the migration queued the same, in the background).
  const indexes = await door.select<{ table: string; name: string }>("SELECT table, name FROM system.data_skipping_indices WHERE database = {db:String} AND name LIKE 'idx_%_text' ORDER BY table, name", { db: door.database });
  let t = performance.now();
  for (const ix of indexes) {
    await door.command('ALTER TABLE {db:Identifier}.{t:Identifier} CLEAR INDEX {i:Identifier} SETTINGS mutations_sync = 2', { t: ix.table, i: ix.name });
    await door.command('ALTER TABLE {db:Identifier}.{t:Identifier} MATERIALIZE INDEX {i:Identifier} SETTINGS mutations_sync = 2', { t: ix.table, i: ix.name });
  }
  const buildSeconds = (performance.now() - t) / 1000;
  log(`${indexes.length} text indexes built over the stored history in ${buildSeconds.toFixed(1)} s`);
  const sizes = await door.select<{ table: string; index_bytes: string; table_bytes: string }>(
    `SELECT i.table AS table, sum(i.data_compressed_bytes) AS index_bytes, any(p.b) AS table_bytes
     FROM system.data_skipping_indices AS i
     JOIN (SELECT table, sum(bytes_on_disk) AS b FROM system.parts WHERE database = {db:String} AND active GROUP BY table) AS p ON p.table = i.table
     WHERE i.database = {db:String} AND i.name LIKE 'idx_%_text' GROUP BY i.table ORDER BY i.table`,
    { db: door.database },
  );
  const queries = createReadQueries(door, door.database, DEFAULT_QUERY_CONTEXT);
  const window = { fromMs: 0, toMs: Date.UTC(2200, 0, 1) };
  const runs = Number(opt.runs);
  const n = meta.rows.invocations;
  const kinds: Record<string, (i: number) => string> = {
    rare: (i) => `q${Math.floor(((i * 7919 + 13) % 1000) / 1000 * n)}`,
    common: () => 'popular',
    phrase: (i) => `"popular ${(i * 613) % 20000}"`,
  };
  const figures: Record<string, { p50: number; p95: number; p99: number; hits: number }> = {};
  for (const [kind, q] of Object.entries(kinds)) {
    const ms: number[] = [];
    let hits = 0;
    for (let i = 0; i < runs; i++) {
      t = performance.now();
      const a = await queries.search({ q: q(i), window, limit: 50 });
      ms.push(performance.now() - t);
      hits += a.hits.length;
    }
    figures[kind] = { p50: quantile(ms, 0.5), p95: quantile(ms, 0.95), p99: quantile(ms, 0.99), hits: hits / runs };
    log(`${kind}: p50 ${figures[kind].p50.toFixed(0)} / p95 ${figures[kind].p95.toFixed(0)} ms, ${figures[kind].hits.toFixed(1)} hits a search`);
  }
  await door.close();
  const targets: Record<string, string> = { rare: 'p95 ≤ 1 s', common: 'p95 ≤ 1 s', phrase: 'p95 ≤ 2 s' };
  process.stdout.write(
    [
      `bench:search — GET /v1/search over N = ${n.toLocaleString('en')} calls (the whole window, limit 50), ${runs} searches each`,
      '| search | p50 | p95 | p99 (ms) | hits a search | target |',
      '|---|---|---|---|---|---|',
      ...Object.entries(figures).map(([k, f]) => `| ${k} | ${f.p50.toFixed(0)} | ${f.p95.toFixed(0)} | ${f.p99.toFixed(0)} | ${f.hits.toFixed(1)} | ${targets[k]} |`),
      `text indexes (${indexes.map((i) => i.name).join(', ')}) built over the stored history in ${buildSeconds.toFixed(1)} s`,
      ...sizes.map((s) => `${s.table}: text indexes ${(Number(s.index_bytes) / 2 ** 20).toFixed(1)} MiB = ${((100 * Number(s.index_bytes)) / Number(s.table_bytes)).toFixed(1)} % of the table (${(Number(s.table_bytes) / 2 ** 20).toFixed(0)} MiB on disk; target ≤ 20 %)`),
      '',
    ].join('\n'),
  );
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ calls: n, buildSeconds, figures, sizes }, null, 2));
}

runBench(main, () => undefined, log);
