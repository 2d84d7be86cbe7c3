/**
 * `npm run bench:audit-log`: what the audit log costs on a full database, checked as a
 * deployment checks it.
 *
 *   npm run bench:audit-log -- [--invocations 10000000] [--data-dir ./.bench-data/history] [--checkpoints 1000] [--proofs 300] [--verify true|false] [--copy link] [--json FILE]
 *
 * N is `--invocations` calls (default 10 M; the leaves are N calls plus their outputs,
 * dependencies and violations, ~2.4 N). On a copy of the bench:history history of N calls (built
 * or reused, migrated), in this process alone (embedded ClickHouse: one process per data
 * directory), it measures:
 *  - the build: the builder catching up from nothing on every stored record, one head signed at
 *    the end (seconds, leaves per second);
 *  - the checkpoints a deployment would have witnessed by then: `--checkpoints` K signed notes at
 *    tree sizes evenly spread over the log, the last being the builder's own, each root computed
 *    from the stored tiles as the builder's signer computes it, appended to a ledger in size
 *    order (seconds, timed apart: a deployment signs them one a minute, not at verify);
 *  - `verify` over the whole log with the witness check against that ledger, as `tool-audit
 *    verify` runs it: total seconds and its parts (records against their leaves, the tree, the
 *    witnessed checkpoints, the contents and future-dated rows). **Target: ≤ 60 s at N = 10 M.**
 *    The copy is untouched, so any finding fails the bench;
 *  - `--proofs` proofs of random calls through the read queries as the route serves them, before
 *    verify and again right after it (p50 / p95 / p99). **Target: p95 ≤ 50 ms.** A history built
 *    before migration 043 keys its calls without their task: those proofs are timed first, as
 *    stored, then the copy's call_keys is derived again as a deployment since writes it;
 *  - the log's bytes on disk per leaf.
 * Not measured here: the log's cost on ingest. The builder runs on the job lane of `serve` (or
 * `analyze`), a minute behind the rows, never in `tool-audit ingest`.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAuditLogBuilder } from '../../analyzers/audit-log/builder.ts';
import { parseCheckpoint, signCheckpoint } from '../../analyzers/audit-log/checkpoint.ts';
import { publicKeyText } from '../../analyzers/audit-log/heads.ts';
import { fileLedger, readEntries } from '../../analyzers/audit-log/ledger.ts';
import { doorSelect, logTiles } from '../../analyzers/audit-log/log-store.ts';
import { rangeHasher } from '../../analyzers/audit-log/tiles.ts';
import { verifyLog, type VerifyReport } from '../../analyzers/audit-log/verify.ts';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { silentLogger } from '../../platform/logger.ts';
import { createReadQueries } from '../../queries/index.ts';
import { DEFAULT_QUERY_CONTEXT } from '../../queries/sql.ts';
import { runBench } from '../bench-process.ts';
import { openHistoryCopy } from '../history/history-copy.ts';
import { historyShapeOf, historyShapeOptions } from '../history/history-db.ts';
import { percentiles, quantile } from '../stats.ts';

const { values: opt } = parseArgs({
  options: {
    ...historyShapeOptions('10000000'),
    copy: { type: 'string', default: 'link' },
    checkpoints: { type: 'string', default: '1000' },
    proofs: { type: 'string', default: '300' },
    verify: { type: 'string', default: 'true' },
    json: { type: 'string' },
  },
});
const shape = historyShapeOf(opt);
const CHECKPOINTS = Number(opt.checkpoints);
const PROOFS = Number(opt.proofs);
if (!(Number.isInteger(CHECKPOINTS) && CHECKPOINTS >= 1)) throw new Error(`--checkpoints must be a whole number ≥ 1; got ${opt.checkpoints}`);
if (!(Number.isInteger(PROOFS) && PROOFS >= 1)) throw new Error(`--proofs must be a whole number ≥ 1; got ${opt.proofs}`);
const ORIGIN = 'tool-audit/bench';
const log = (s: string) => process.stderr.write(`[bench:audit-log] ${s}\n`);
const since = (t: number) => (performance.now() - t) / 1000;


async function main(): Promise<void> {
  // The door serve opens: a connection per lane (reads side by side), as the route is served.
  const { meta, config, door } = await openHistoryCopy({ dataDir: opt['data-dir'] as string, shape, copy: opt.copy, log });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keys = [{ name: ORIGIN, key: privateKey }];
  // Outside the data directory, as AUDIT_LOG_DIR is. The builder keeps its own file there, so that
  // the ledger verify reads holds every checkpoint in the order a deployment appends them —
  // growing sizes, the builder's last — rather than the builder's first and the earlier ones after.
  const ledgerDir = mkdtempSync(join(tmpdir(), 'audit-log-ledger-'));
  const builderLedger = fileLedger(ledgerDir, 'builder.jsonl');
  // The whole history is older than a minute: no grace needed; one head at the end.
  const builder = createAuditLogBuilder({ clickhouse: door, logger: silentLogger(), signingKey: privateKey, headIntervalMs: 0, graceMs: 0, stepRows: 1_000_000, origin: ORIGIN, ledger: builderLedger });
  log(`building the log over ${meta.rows.invocations.toLocaleString('en')} calls and what goes with them`);
  let t = performance.now();
  const built = await builder.runOnce();
  const buildSeconds = since(t);
  if (built.refused || !built.head) throw new Error(`the builder signed no head over the copy: ${built.refused?.reason ?? 'nothing to log'}`);
  log(`built: ${built.treeSize.toLocaleString('en')} leaves in ${buildSeconds.toFixed(1)} s`);

  const runVerify = opt.verify !== 'false';
  t = performance.now();
  const ledgerFile = join(ledgerDir, 'checkpoints.jsonl');
  const signed = runVerify ? await witnessedCheckpoints(door, fileLedger(ledgerDir), builderLedger, built.treeSize, keys) : 0;
  const checkpointSeconds = runVerify ? since(t) : Number.NaN;
  if (runVerify) log(`${signed.toLocaleString('en')} checkpoints signed into ${ledgerFile} in ${checkpointSeconds.toFixed(1)} s`);

  const queries = createReadQueries(door, config.clickhouse.database, DEFAULT_QUERY_CONTEXT);
  // Two samples of calls: the proofs after verify do not read what the first ones just read.
  const ids = (await door.select<{ id: string }>(`SELECT toString(call_id) AS id FROM {db:Identifier}.tool_invocations ORDER BY rand() LIMIT {n:UInt64}`, { n: 3 * PROOFS })).map((r) => r.id);
  const timeProofs = async (sample: string[]): Promise<number[]> => {
    const ms: number[] = [];
    for (const id of sample) {
      const t0 = performance.now();
      const p = await queries.callProof({ callId: id });
      ms.push(performance.now() - t0);
      if ('why' in p) throw new Error(`no proof for ${id}: ${p.why}`);
    }
    return ms;
  };
  const legacy = await keyedBefore043(door, () => timeProofs(ids.slice(2 * PROOFS)));
  const before = await timeProofs(ids.slice(0, PROOFS));
  log(`proofs before verify: p95 ${quantile(before, 0.95).toFixed(1)} ms`);

  let verified: VerifyReport | undefined;
  let verifySeconds = Number.NaN;
  if (runVerify) {
    t = performance.now();
    // Retention as long as the history's span: every row of it is live, none expired.
    verified = await verifyLog(door, {
      retentionDays: { tool_call: 3650, output: 3650, dependency: 3650, violation: 3650, quarantine: 3650, budget_decision: 3650 },
      publicKey: publicKeyText(publicKey),
      witness: { entries: (on) => readEntries(ledgerFile, on), origin: ORIGIN, keys: [publicKey] },
    });
    verifySeconds = since(t);
    const s = verified.seconds;
    log(`verify: ${found(verified)} findings in ${verifySeconds.toFixed(1)} s (records ${s.records.toFixed(1)} s, tree ${s.tree.toFixed(1)} s, witness ${s.witness.toFixed(1)} s, contents ${s.contents.toFixed(1)} s; kinds joined slice by slice: ${verified.joined.join(', ') || 'none'})`);
    // The copy is untouched: a finding is a bug of the log or of verify, not a figure to print.
    if (found(verified) > 0) {
      for (const f of verified.findings.slice(0, 20)) log(`  ${f.what}: ${f.detail}`);
      throw new Error(`verify found ${found(verified)} problem(s) on an untouched copy (${JSON.stringify(verified.found)})`);
    }
    if (verified.witness?.checked !== signed) throw new Error(`verify checked ${verified.witness?.checked ?? 0} checkpoints of the ${signed} signed`);
  }
  const after = runVerify ? await timeProofs(ids.slice(PROOFS, 2 * PROOFS)) : [];

  const [bytes] = await door.select<{ table: string; b: string }>(
    "SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = {db:String} AND active AND table LIKE 'audit_log_%'",
  );
  await door.close();
  const figures = {
    calls: meta.rows.invocations,
    leaves: built.treeSize,
    buildSeconds,
    leavesPerSecond: built.treeSize / buildSeconds,
    checkpoints: signed,
    checkpointSeconds,
    verifySeconds,
    verifyParts: verified?.seconds ?? null,
    findings: verified ? found(verified) : 0,
    witnessChecked: verified?.witness?.checked ?? 0,
    witnessAgreedTo: verified?.witness?.agreedTo ?? 0,
    proofs: before.length,
    // After verify when it ran (what this figure always was), else the only run.
    proofMs: percentiles(runVerify ? after : before),
    proofMsBeforeVerify: percentiles(before),
    proofMsKeyedBefore043: legacy && percentiles(legacy),
    bytesPerLeaf: Number(bytes?.b ?? 0) / Math.max(1, built.treeSize),
  };
  const p = (x: { p50: number; p95: number; p99: number }) => `p50 ${x.p50.toFixed(1)} / p95 ${x.p95.toFixed(1)} / p99 ${x.p99.toFixed(1)} ms`;
  const v = figures.verifyParts;
  process.stdout.write(
    [
      `bench:audit-log — N = ${figures.calls.toLocaleString('en')} calls, ${figures.leaves.toLocaleString('en')} leaves`,
      `build (catch-up from nothing): ${figures.buildSeconds.toFixed(1)} s, ${Math.round(figures.leavesPerSecond).toLocaleString('en')} leaves/s`,
      ...(v
        ? [
            `checkpoints witnessed (prepared, not verify): ${figures.checkpoints.toLocaleString('en')} signed in ${figures.checkpointSeconds.toFixed(1)} s (${((1000 * figures.checkpointSeconds) / figures.checkpoints).toFixed(1)} ms each)`,
            `verify with witness checks (whole log): ${figures.verifySeconds.toFixed(1)} s — records ${v.records.toFixed(1)}, tree ${v.tree.toFixed(1)}, witness ${v.witness.toFixed(1)}, contents ${v.contents.toFixed(1)} s; ${figures.findings} findings; ${figures.witnessChecked.toLocaleString('en')} checkpoints checked (target ≤ 60 s at 10 M calls)`,
            `proof of a call (${figures.proofs}), before verify: ${p(figures.proofMsBeforeVerify)}; after: ${p(figures.proofMs)} (target p95 ≤ 50 ms)`,
          ]
        : [`verify: not run (--verify false)`, `proof of a call (${figures.proofs}): ${p(figures.proofMs)} (target p95 ≤ 50 ms)`]),
      ...(figures.proofMsKeyedBefore043 ? [`proof of a call keyed without its task (stored before migration 043), as the history was: ${p(figures.proofMsKeyedBefore043)}`] : []),
      `log on disk: ${figures.bytesPerLeaf.toFixed(1)} bytes per leaf`,
      '',
    ].join('\n'),
  );
  if (opt.json) writeFileSync(opt.json, JSON.stringify(figures, null, 2));
}

/**
 * A history built before migration 043 has its calls keyed without their task: their proofs find
 * the row through the tasks of their instant. Those are timed as stored (`time`), then call_keys is
 * derived again from the calls as its view writes it since (on this copy only), so that the
 * figures after are those of calls stored by a deployment that has the migration. Undefined when
 * every call is keyed with its task.
 */
async function keyedBefore043(door: ClickHouseDoor, time: () => Promise<number[]>): Promise<number[] | undefined> {
  const [r] = await door.select<{ n: string }>("SELECT countIf(task_id = '') AS n FROM {db:Identifier}.call_keys");
  if (Number(r?.n ?? 0) === 0) return undefined;
  const ms = await time();
  log(`proofs of calls keyed without their task: p95 ${quantile(ms, 0.95).toFixed(1)} ms; deriving call_keys again from the calls, with their tasks`);
  const t = performance.now();
  await door.command('TRUNCATE TABLE {db:Identifier}.call_keys');
  await door.command('INSERT INTO {db:Identifier}.call_keys (call_id, fingerprint, created_at, task_id) SELECT call_id, fingerprint, created_at, task_id FROM {db:Identifier}.tool_invocations');
  log(`call_keys derived again in ${since(t).toFixed(1)} s`);
  return ms;
}

/** Every finding verify counted (its list is capped). */
const found = (r: VerifyReport) => Object.values(r.found).reduce((a, b) => a + b, 0);

/**
 * The ledger a deployment would hold over this log: checkpoints at `CHECKPOINTS` tree sizes evenly
 * spread up to `size`, in growing size, the last being the note the builder signed (copied as it
 * is, with its time). Each root is computed from the stored tiles, as the signer computes it
 * before it signs; each checkpoint is dated at the storage time of its last leaf (the history is
 * stored over days: a deployment signed it then). Returns the checkpoints written.
 */
async function witnessedCheckpoints(
  door: ClickHouseDoor,
  ledger: ReturnType<typeof fileLedger>,
  builderLedger: ReturnType<typeof fileLedger>,
  size: number,
  keys: Parameters<typeof signCheckpoint>[1],
): Promise<number> {
  let last: { note: string; atMs: number } | undefined;
  await builderLedger.entries((e) => {
    if (e.type === 'checkpoint') last = { note: e.note, atMs: e.at_ms };
  });
  const own = last && parseCheckpoint(last.note);
  if (!last || !own || typeof own === 'string' || own.size !== size) throw new Error(`the builder's ledger holds no checkpoint of its ${size} leaves`);
  const sizes = [...new Set(Array.from({ length: CHECKPOINTS - 1 }, (_, i) => Math.floor(((i + 1) * size) / CHECKPOINTS)))].filter((s) => s > 0 && s < size);
  const at = await door.select<{ i: string; t: string }>(
    'SELECT leaf_index AS i, toUnixTimestamp64Milli(stored_at) AS t FROM {db:Identifier}.audit_log_leaves WHERE leaf_index IN {at:Array(UInt64)} ORDER BY i LIMIT 1 BY i',
    { at: sizes.map((s) => s - 1) },
  );
  const atMs = new Map(at.map((r) => [Number(r.i) + 1, Number(r.t)]));
  const range = rangeHasher(logTiles(doorSelect(door)));
  for (const s of sizes) {
    const root = (await range(0, s)).toString('hex');
    await ledger.addCheckpoint(signCheckpoint({ origin: ORIGIN, size: s, root }, keys), atMs.get(s) ?? last.atMs);
  }
  // The builder's own root, recomputed the same way: the tiles the checkpoints were signed from agree with it.
  const root = (await range(0, size)).toString('hex');
  if (root !== own.root) throw new Error(`the stored tiles give root ${root} for ${size} leaves, the builder signed ${own.root}`);
  await ledger.addCheckpoint(last.note, last.atMs);
  return sizes.length + 1;
}

runBench(main, () => undefined, log);
