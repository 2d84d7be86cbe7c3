/**
 * Start-up of `tool-audit serve` as the image runs it (embedded ClickHouse, fresh data dir,
 * migrations, no Kafka): time from spawn until /readyz answers 200, and the CPU the process
 * had used by then (Linux /proc), for the TypeScript sources through tsx (as shipped; with a
 * warm and with a disabled tsx cache — a fresh container starts with an empty one) and for
 * the same sources compiled by tsc into .bench-data/startup-dist. Variants are interleaved
 * so background load hits them alike; min and median are reported.
 *
 *   npm run bench:startup [-- rounds, default 7]
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../stats.ts';

const ROUNDS = Number(process.argv[2] ?? 7);
const root = new URL('../../', import.meta.url).pathname;
const out = join(root, '.bench-data/startup-dist');
const TICKS_PER_S = 100; // USER_HZ on Linux

interface Variant {
  name: string;
  args: string[];
  env?: Record<string, string>;
}

const VARIANTS: Variant[] = [
  { name: 'tsx (bin/tool-audit.mjs, warm tsx cache)', args: [join(root, 'bin/tool-audit.mjs'), 'serve'] },
  { name: 'tsx, cache disabled (fresh container)', args: [join(root, 'bin/tool-audit.mjs'), 'serve'], env: { TSX_DISABLE_CACHE: '1' } },
  { name: 'compiled JS (node cli/main.js)', args: [join(out, 'cli/main.js'), 'serve'] },
];

/** tsc of the product into `out`, plus what tsc does not emit. */
async function compile(): Promise<void> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const tsconfig = {
    extends: '../../tsconfig.json',
    compilerOptions: { noEmit: false, rootDir: '../..', outDir: '.', rewriteRelativeImportExtensions: true },
    include: ['cli', 'api', 'ingest', 'analyzers', 'queries', 'dashboards', 'schemas', 'emit', 'platform'].map((d) => `../../${d}`),
    exclude: ['../../emit/dist'],
  };
  writeFileSync(join(out, 'tsconfig.json'), JSON.stringify(tsconfig));
  const t0 = performance.now();
  const tsc = spawn(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(out, 'tsconfig.json')], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => tsc.on('exit', resolve));
  if (code !== 0) throw new Error(`tsc exited with ${code}`);
  // The SQL migrations, and a decode-thread entry that loads JavaScript instead of registering tsx.
  cpSync(join(root, 'platform/clickhouse/migrations'), join(out, 'platform/clickhouse/migrations'), { recursive: true });
  writeFileSync(join(out, 'ingest/decode-worker-entry.mjs'), "await import('../decode-worker.js');\n");
  writeFileSync(join(out, 'ingest/otlp/map-worker-entry.mjs'), "await import('../map-worker.js');\n");
  console.log(`compiled with tsc in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** utime + stime of a process so far, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

/** One start: spawn, poll /readyz, measure, SIGTERM. */
async function start(v: Variant): Promise<{ wallMs: number; cpuMs: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tool-audit-startup-'));
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const env: NodeJS.ProcessEnv = { ...process.env, ...v.env, PORT: String(port), TOOL_AUDIT_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.KAFKA_BROKERS;
  delete env.CLICKHOUSE_URL;
  const t0 = performance.now();
  const child = spawn(process.execPath, v.args, { env, cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (;;) {
      if (await ready(port)) break;
      if (child.exitCode !== null) throw new Error(`${v.name} exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return { wallMs: performance.now() - t0, cpuMs: cpuMs(child.pid as number) };
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function ready(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
  } catch {
    return false;
  }
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

await compile();
const results = new Map<string, Array<{ wallMs: number; cpuMs: number }>>(VARIANTS.map((v) => [v.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const v of VARIANTS) results.get(v.name)?.push(await start(v));
}
console.log(`tool-audit serve, spawn → /readyz 200, ${ROUNDS} rounds (node ${process.version})`);
console.log('| variant | wall min | wall median | CPU min | CPU median |\n|---|---|---|---|---|');
for (const [name, rs] of results) {
  const wall = rs.map((r) => r.wallMs);
  const cpu = rs.map((r) => r.cpuMs);
  console.log(`| ${name} | ${fmt(Math.min(...wall))} | ${fmt(median(wall))} | ${fmt(Math.min(...cpu))} | ${fmt(median(cpu))} |`);
}
