/**
 * `npm run bench:export`: GET /v1/export of every call of the bench:history database,
 * as a user downloads it from `serve`, per format: seconds, rows and MB per second, and serve's
 * memory (VmRSS of serve, embedded ClickHouse included, sampled every 200 ms) before and at its
 * peak during the export. The Parquet file is then read back by pyarrow (its row count).
 *
 *   npm run bench:export -- [--invocations 10000000] [--data-dir ./.bench-data/history] [--formats parquet,ndjson,csv] [--copy link] [--json FILE]
 *
 * serve runs without the analyzer and the audit log builder, so the figures are the export's own.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { runBench } from '../bench-process.ts';
import { copyHistory, ensureHistory, historyShapeOf, historyShapeOptions } from '../history/history-db.ts';
import { HISTORY_KEY, startServe, stopServe, type ServeRun } from '../history/history-serve.ts';

const { values: opt } = parseArgs({
  options: {
    ...historyShapeOptions('10000000'),
    copy: { type: 'string', default: 'link' },
    formats: { type: 'string', default: 'parquet,ndjson' },
    json: { type: 'string' },
  },
});
const shape = historyShapeOf(opt);
const log = (s: string) => process.stderr.write(`[bench:export] ${s}\n`);
const ROOT = resolve(import.meta.dirname, '..');
let serve: ServeRun | undefined;

interface Figure {
  format: string;
  seconds: number;
  bytes: number;
  rows: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
}

async function exportOnce(run: ServeRun, format: string, file: string, calls: number): Promise<Figure> {
  const rssBeforeMiB = run.rssMiB();
  let rssPeakMiB = rssBeforeMiB;
  const sampler = setInterval(() => (rssPeakMiB = Math.max(rssPeakMiB, run.rssMiB())), 200);
  const t = performance.now();
  let bytes = 0;
  let newlines = 0;
  try {
    const res = await fetch(`${run.base}/v1/export?kind=calls&from=1970-01-01&format=${format}`, { headers: { authorization: `Bearer ${HISTORY_KEY}` } });
    if (!res.ok || !res.body) throw new Error(`export ${format}: ${res.status} ${await res.text()}`);
    const counted = Readable.fromWeb(res.body as ReadableStream<Uint8Array>).map((chunk: Buffer) => {
      bytes += chunk.length;
      if (format === 'ndjson') for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
      return chunk;
    });
    await pipeline(counted, createWriteStream(file));
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - t) / 1000;
  let rows = format === 'ndjson' ? newlines : Number.NaN;
  if (format === 'parquet') {
    const py = join(ROOT, '.services/venv/bin/python');
    rows = Number(execFileSync(py, ['-c', 'import sys, pyarrow.parquet as pq; print(pq.ParquetFile(sys.argv[1]).metadata.num_rows)', file], { encoding: 'utf8' }).trim());
  }
  if (format === 'csv') rows = calls; // not counted: a CSV field may hold newlines
  return { format, seconds, bytes, rows, rssBeforeMiB, rssPeakMiB };
}

async function main(): Promise<void> {
  const dir = resolve(opt['data-dir'] as string);
  const meta = await ensureHistory(dir, shape, log);
  const { dataDir } = copyHistory(dir, opt.copy === 'full' ? 'full' : 'link');
  serve = await startServe({ dataDir, readyTimeoutMs: 600_000, log, env: { ANALYZER_ENABLED: 'false', AUDIT_LOG: 'off', HINTS_INTERVAL_MS: '0' } });
  if (serve.readyzS === null) throw new Error('serve did not become ready');
  const figures: Figure[] = [];
  for (const format of String(opt.formats).split(',')) {
    const file = join(dir, `export-bench.${format}`);
    log(`exporting ${meta.rows.invocations.toLocaleString('en')} calls as ${format}`);
    const f = await exportOnce(serve, format, file, meta.rows.invocations);
    rmSync(file, { force: true });
    figures.push(f);
    log(`${format}: ${f.seconds.toFixed(1)} s, ${(f.bytes / 1e6).toFixed(0)} MB, ${f.rows.toLocaleString('en')} rows, RSS ${f.rssBeforeMiB.toFixed(0)} → peak ${f.rssPeakMiB.toFixed(0)} MiB`);
  }
  await stopServe(serve);
  const lines = [
    `bench:export — GET /v1/export?kind=calls of N = ${meta.rows.invocations.toLocaleString('en')} calls from serve (embedded ClickHouse, no jobs)`,
    '| format | seconds | rows | rows/s | MB | MB/s | serve RSS before → peak (MiB) |',
    '|---|---|---|---|---|---|---|',
    ...figures.map((f) => `| ${f.format} | ${f.seconds.toFixed(1)} | ${f.rows.toLocaleString('en')} | ${Math.round(f.rows / f.seconds).toLocaleString('en')} | ${(f.bytes / 1e6).toFixed(0)} | ${(f.bytes / 1e6 / f.seconds).toFixed(1)} | ${f.rssBeforeMiB.toFixed(0)} → ${f.rssPeakMiB.toFixed(0)} |`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ calls: meta.rows.invocations, figures }, null, 2));
}

runBench(
  main,
  () => {
    if (serve && serve.child.exitCode === null) serve.child.kill('SIGKILL');
  },
  log,
);
