/**
 * `tool-audit verify [--from-leaf N] [--to-leaf M] [--public-key K]… [--witness FILE | --no-witness]
 * [--json]`: recomputes the audit log from ClickHouse, proves it against every checkpoint
 * witnessed outside it, and names every altered, deleted, inserted, future-dated or reordered
 * record and the part it is in (analyzers/audit-log/verify.ts). Exit 0 when nothing was found,
 * 1 when something was, 2 on bad arguments. On the embedded default it opens the data directory
 * itself: stop serve first (one process per data directory).
 *
 * The checkpoints: the builder's ledger (AUDIT_LOG_DIR/checkpoints.jsonl) unless --witness names
 * another (a witness's copy, a monitor's). They must be signed by a trusted key: each --public-key
 * (base64 DER, PEM, a note verifier key, or a file holding one), else the key this configuration
 * signs with.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readEntries } from '../analyzers/audit-log/ledger.ts';
import { verifyLog, type VerifyReport } from '../analyzers/audit-log/verify.ts';
import type { Config } from '../platform/config.ts';
import { silentLogger } from '../platform/logger.ts';
import { loadSigningKey, publicKeyArg } from './audit-log-key.ts';
import { configOrExit, openClickHouse } from './runtime.ts';
import { USAGES } from './usage.ts';
import { badRequest } from '../platform/errors.ts';

const OPTIONS = {
  'from-leaf': { type: 'string' },
  'to-leaf': { type: 'string' },
  'public-key': { type: 'string', multiple: true },
  'max-findings': { type: 'string' },
  witness: { type: 'string' },
  'no-witness': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** Runs the command; returns the exit status. */
export async function verify(argv: string[]): Promise<number> {
  const usage = (message: string) => {
    process.stderr.write(`tool-audit verify: ${message}\n${USAGES.verify}\n`);
    return 2;
  };
  let v;
  try {
    v = parseArgs({ args: argv, strict: true, allowPositionals: false, options: OPTIONS }).values;
  } catch (err) {
    return usage((err as Error).message);
  }
  const leaf = (s: string | undefined, name: string): number | undefined => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) throw badRequest(`--${name} must be an integer ≥ 0; got ${s}`);
    return n;
  };
  let fromLeaf: number | undefined;
  let toLeaf: number | undefined;
  let maxFindings: number | undefined;
  let pinned: KeyObject[];
  try {
    fromLeaf = leaf(v['from-leaf'], 'from-leaf');
    toLeaf = leaf(v['to-leaf'], 'to-leaf');
    maxFindings = leaf(v['max-findings'], 'max-findings');
    pinned = (v['public-key'] ?? []).map(publicKeyArg);
    if (v.witness && v['no-witness']) throw badRequest('--witness and --no-witness exclude each other');
    if (v.witness && !existsSync(v.witness)) throw badRequest(`--witness ${v.witness}: no such file`);
  } catch (err) {
    return usage((err as Error).message);
  }
  const config = configOrExit();
  const ledgerFile = v['no-witness'] ? undefined : (v.witness ?? join(config.auditLog.dir, 'checkpoints.jsonl'));
  const keys = pinned.length ? pinned : await ownKey(config);
  if (ledgerFile && !existsSync(ledgerFile)) process.stderr.write(`tool-audit verify: no checkpoints at ${ledgerFile}: nothing witnessed to prove the log against\n`);
  const witness = ledgerFile && existsSync(ledgerFile) ? { entries: (on: Parameters<typeof readEntries>[1]) => readEntries(ledgerFile, on), origin: config.auditLog.origin, keys } : undefined;
  const ch = await openClickHouse(config);
  try {
    const d = config.retentionDays;
    const started = performance.now();
    const r = await verifyLog(ch, {
      ...(fromLeaf === undefined ? {} : { fromLeaf }),
      ...(toLeaf === undefined ? {} : { toLeaf }),
      ...(pinned[0] ? { publicKey: pinned[0].export({ format: 'der', type: 'spki' }).toString('base64') } : {}),
      ...(maxFindings === undefined ? {} : { maxFindings }),
      ...(witness ? { witness } : {}),
      retentionDays: { tool_call: d.invocations, output: d.outputs, dependency: d.workflows, violation: d.quarantine, quarantine: d.quarantine, budget_decision: d.invocations, model_turn: d.invocations, agent_run: d.invocations },
    });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (v.json) process.stdout.write(`${JSON.stringify({ ...r, seconds })}\n`);
    else printReport(r, seconds);
    return Object.values(r.found).some((n) => n > 0) ? 1 : 0;
  } finally {
    await ch.close();
  }
}

/** The key this configuration signs with, as the one trusted when none is pinned. */
async function ownKey(config: Config): Promise<KeyObject[]> {
  if (!config.auditLog.signingKey && !existsSync(join(config.auditLog.dir, 'signing-key.pem'))) return [];
  return [await loadSigningKey(config, silentLogger())];
}

function printReport(r: VerifyReport, seconds: number): void {
  for (const f of r.findings) process.stdout.write(`${f.what.padEnd(8)} ${f.detail}\n`);
  const w = r.witness;
  if (w) {
    for (const reset of w.resets) process.stdout.write(`note     the operator accepted a rewritten history at ${new Date(reset.atMs).toISOString()}: ${reset.reason}\n`);
    process.stdout.write(`witness  ${w.checked} of ${w.checkpoints} checkpoints checked (after the last reset), the stored log agrees up to ${w.agreedTo} leaves\n`);
  }
  const total = Object.values(r.found).reduce((a, b) => a + b, 0);
  const counts = Object.entries(r.found).filter(([, n]) => n > 0).map(([what, n]) => `${n} ${what}`).join(', ');
  const listed = total > r.findings.length ? ` (the first ${r.findings.length} listed)` : '';
  process.stdout.write(`${total === 0 ? 'verified' : `${total} finding(s): ${counts}${listed}`}; ${r.checkedLeaves} of ${r.treeSize} leaves checked, ${r.expired} expired by retention, in ${seconds} s\n`);
}
