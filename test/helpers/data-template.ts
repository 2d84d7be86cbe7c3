/**
 * A migrated embedded-ClickHouse data directory, made once per test run. Each test process's
 * engine starts on a copy (clickhouse.ts: ~4 s of CPU a process not spent replaying migrations),
 * and tests starting `tool-audit serve` on a fresh directory copy it instead of letting serve
 * migrate it: the first start on an empty directory took 7.1 s here, a start on a migrated one
 * 3.4 s. The copy is ClickHouse's files only (its symlinks are relative, so a copy stands alone);
 * tool-audit's own state (keys, the key filter) is made by each serve as on a first start. Tests
 * of the first start itself (serve-startup, npm-start) do not use it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;

/** The database `tool-audit migrate` made in the template (the configuration's default). */
export const TEMPLATE_DATABASE = 'tool_audit';

/** The retention every test database is migrated with (the configuration's defaults, written out). */
export const TEMPLATE_RETENTION = { invocations: 90, outputs: 30, workflows: 30, quarantine: 90 };

// The template is made with them whatever the shell running the tests sets.
const TEMPLATE_ENV = {
  CLICKHOUSE_DATABASE: TEMPLATE_DATABASE,
  RETENTION_INVOCATIONS_DAYS: String(TEMPLATE_RETENTION.invocations),
  RETENTION_OUTPUTS_DAYS: String(TEMPLATE_RETENTION.outputs),
  RETENTION_WORKFLOWS_DAYS: String(TEMPLATE_RETENTION.workflows),
  RETENTION_QUARANTINE_DAYS: String(TEMPLATE_RETENTION.quarantine),
};

/** What a data directory holds that ClickHouse made; the rest is tool-audit's state or scratch. */
const CLICKHOUSE_ENTRIES = new Set(['data', 'metadata', 'metadata_dropped', 'store']);

/** Fills `dataDir` (new or empty) with a copy of the run's migrated template, for a serve on embedded ClickHouse. */
export async function seedDataDir(dataDir: string): Promise<void> {
  const template = await templateDir();
  mkdirSync(dataDir, { recursive: true });
  for (const e of readdirSync(template)) if (CLICKHOUSE_ENTRIES.has(e)) cpSync(join(template, e), join(dataDir, e), { recursive: true, verbatimSymlinks: true });
}

/**
 * The template, in the run's temporary folder (test/global-setup.ts): the first worker to ask makes
 * it with `tool-audit migrate`, holding a lock directory; the others wait for its marker.
 */
async function templateDir(): Promise<string> {
  const base = join(tmpdir(), 'tool-audit-data-template');
  const dir = join(base, 'data');
  const ready = join(base, 'ready');
  try {
    mkdirSync(base);
  } catch {
    for (const end = Date.now() + 180_000; !existsSync(ready); ) {
      if (Date.now() > end) throw new Error(`the data directory template in ${base} was not made within 3 minutes`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return dir;
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'KAFKA_BROKERS' && k !== 'CLICKHOUSE_URL') env[k] = v;
  const r = spawnSync(process.execPath, [join(root, 'bin/tool-audit.mjs'), 'migrate'], { env: { ...env, ...TEMPLATE_ENV, TOOL_AUDIT_DATA_DIR: dir, LOG_LEVEL: 'warn' }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tool-audit migrate for the data directory template failed (${r.status}): ${r.stderr}`);
  for (const e of readdirSync(dir)) if (!CLICKHOUSE_ENTRIES.has(e)) rmSync(join(dir, e), { recursive: true, force: true });
  writeFileSync(ready, '');
  return dir;
}
