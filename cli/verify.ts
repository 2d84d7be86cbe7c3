/**
 * `tool-audit verify [--from-leaf N] [--to-leaf M] [--public-key K] [--json]`: recomputes the
 * audit log from ClickHouse and names every altered, deleted, inserted or reordered record and the
 * part it is in (analyzers/audit-log/verify.ts). Exit 0 when nothing was found, 1 when something
 * was, 2 on bad arguments. On the embedded default it opens the data directory itself: stop serve
 * first (one process per data directory).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyLog } from '../analyzers/audit-log/verify.ts';
import { configOrExit, openClickHouse } from './runtime.ts';
import { USAGES } from './usage.ts';

/** Runs the command; returns the exit status. */
export async function verify(argv: string[]): Promise<number> {
  let v;
  try {
    v = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { 'from-leaf': { type: 'string' }, 'to-leaf': { type: 'string' }, 'public-key': { type: 'string' }, 'max-findings': { type: 'string' }, json: { type: 'boolean' } } }).values;
  } catch (err) {
    process.stderr.write(`tool-audit verify: ${(err as Error).message}\n${USAGES.verify}\n`);
    return 2;
  }
  const leaf = (s: string | undefined, name: string): number | undefined => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be an integer ≥ 0; got ${s}`);
    return n;
  };
  let fromLeaf: number | undefined;
  let toLeaf: number | undefined;
  let maxFindings: number | undefined;
  try {
    fromLeaf = leaf(v['from-leaf'], 'from-leaf');
    toLeaf = leaf(v['to-leaf'], 'to-leaf');
    maxFindings = leaf(v['max-findings'], 'max-findings');
  } catch (err) {
    process.stderr.write(`tool-audit verify: ${(err as Error).message}\n${USAGES.verify}\n`);
    return 2;
  }
  const key = v['public-key'];
  const publicKey = key === undefined ? undefined : existsSync(key) ? readFileSync(key, 'utf8') : key;
  const config = configOrExit();
  const ch = await openClickHouse(config);
  try {
    const d = config.retentionDays;
    const started = performance.now();
    const r = await verifyLog(ch, { ...(fromLeaf === undefined ? {} : { fromLeaf }), ...(toLeaf === undefined ? {} : { toLeaf }), ...(publicKey ? { publicKey } : {}), ...(maxFindings === undefined ? {} : { maxFindings }), retentionDays: { tool_call: d.invocations, output: d.outputs, dependency: d.workflows, violation: d.quarantine } });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (v.json) process.stdout.write(`${JSON.stringify({ ...r, seconds })}\n`);
    else {
      for (const f of r.findings) process.stdout.write(`${f.what.padEnd(8)} ${f.detail}\n`);
      const total = Object.values(r.found).reduce((a, b) => a + b, 0);
      const counts = Object.entries(r.found).filter(([, n]) => n > 0).map(([what, n]) => `${n} ${what}`).join(', ');
      const listed = total > r.findings.length ? ` (the first ${r.findings.length} listed)` : '';
      process.stdout.write(`${total === 0 ? 'verified' : `${total} finding(s): ${counts}${listed}`}; ${r.checkedLeaves} of ${r.treeSize} leaves checked, ${r.expired} expired by retention, in ${seconds} s\n`);
    }
    return Object.values(r.found).some((n) => n > 0) ? 1 : 0;
  } finally {
    await ch.close();
  }
}
