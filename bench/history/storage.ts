/**
 * `npm run bench:storage`: what the bench:history workload costs on disk, per call —
 * each table and projection of its active parts, the largest columns — and whether its data
 * directory holds anything else once the process that wrote it has exited.
 *
 *   npm run bench:storage -- [--invocations 1000000] [--data-dir ./.bench-data/history] [--columns 40] [--json FILE] [--optimize true|false] [--jobs true|false]
 *
 * Builds (or reuses, migrating it first) the history of bench:history with the same shape
 * options and defaults (so either reuses the other's), in a child process; measures `du -sb` of
 * the directory once that child has exited (what it left behind), then reads system.parts and
 * system.projection_parts (active only) in another child, and `du` again after that one exited.
 * With `--jobs true` (the default) that is measured on a copy (<data-dir>/run, parts hard-linked)
 * in which the jobs a deployment runs have caught up first: the dedup index and the audit log.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { copyHistory, ensureHistory, historyShapeOf, historyShapeOptions, runJobs, storageOf } from './history-db.ts';
import { storageTables } from './storage-report.ts';
import { runBench } from '../bench-process.ts';

const { values: opt } = parseArgs({
  options: {
    ...historyShapeOptions('1000000'),
    columns: { type: 'string', default: '40' },
    jobs: { type: 'string', default: 'true' },
    json: { type: 'string' },
  },
});
const shape = historyShapeOf(opt);
const log = (s: string) => process.stderr.write(`[bench:storage] ${s}\n`);
const du = (dir: string) => Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);

async function main(): Promise<void> {
  const dir = resolve(opt['data-dir'] as string);
  const meta = await ensureHistory(dir, shape, log);
  let base = join(dir, 'base');
  let jobs: Awaited<ReturnType<typeof runJobs>> | undefined;
  if (opt.jobs !== 'false') {
    base = copyHistory(dir, 'link').dataDir;
    jobs = await runJobs(base, log);
  }
  const afterWriter = du(base);
  const report = await storageOf(base, log);
  const afterReader = du(base);
  const calls = meta.rows.invocations;
  const ratio = (b: number) => (b / Math.max(1, report.activeBytes)).toFixed(3);
  process.stdout.write(
    [
      `bench:storage — N = ${calls.toLocaleString('en')} calls (${meta.built ? `built now in ${meta.buildSeconds.toFixed(0)} s` : `reused, built ${meta.builtAt}`}), ${base}`,
      jobs ? `jobs caught up first: dedup index ${jobs.dedupSeconds.toFixed(0)} s, audit log ${jobs.leaves.toLocaleString('en')} leaves in ${jobs.auditSeconds.toFixed(0)} s` : 'jobs: not run (--jobs false): the history alone',
      '',
      `active parts: ${report.activeBytes.toLocaleString('en')} bytes = **${(report.activeBytes / calls).toFixed(1)} bytes per call**; replaced parts still listed: ${report.outdatedParts}`,
      `data directory after the ${jobs ? 'jobs' : meta.built ? 'builder' : 'migration'} exited: ${afterWriter.toLocaleString('en')} bytes (${ratio(afterWriter)}× the active parts); after the reader exited: ${afterReader.toLocaleString('en')} (${ratio(afterReader)}×)`,
      '',
      storageTables(report, calls),
      '',
    ].join('\n'),
  );
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ shape, calls, jobs, afterWriter, afterReader, ...report }, null, 2));
}

runBench(main, () => undefined, log);
