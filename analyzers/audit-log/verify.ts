/**
 * `tool-audit verify`: recomputes the audit log from ClickHouse and names every record that is
 * not as the log says.
 *  - altered: a row whose fields no longer hash to its leaf (the part it is in is named);
 *  - deleted: a leaf whose row is gone — unless retention took it (its created_at is past the
 *    kind's TTL: that is expiry, not tampering);
 *  - inserted: a row stored before the newest head's built_to with no leaf, or a second row with
 *    a key that has one (the part is named);
 *  - log: stored leaves that no longer give the stored subtree roots or the signed root (leaves
 *    reordered, changed or dropped in the log itself), by the range of leaves concerned;
 *  - witness: the stored log contradicts a checkpoint witnessed outside ClickHouse (the rewritten
 *    range named), or a checkpoint or head is signed by no trusted key (verify-witness.ts);
 *  - future: a row dated after now, which no head can cover (an insert dated ahead to stay out
 *    of the log);
 *  - content: an output content that does not hash to its content_hash (contents are stored once
 *    per hash, outside the leaves: the leaf covers the hash).
 *
 * First, over the whole log, each kind's rows are compared with its leaves as multisets of hashes
 * (verify-kinds.ts: a scan of each table); a kind found equal is done. A kind that is not is
 * joined with its leaves in slices of storage time (a slice per ~million leaves, the log being in
 * storage order; verify-slices.ts), which names every record that is not as the log says. Memory
 * stays bounded whatever the log's size (a sum per kind, a slice), and at most `maxFindings`
 * findings are kept (every one is counted).
 */
import type { KeyObject } from 'node:crypto';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { headSigned, publicKeyFrom } from './heads.ts';
import { BLOCK, LEAF_KINDS, leafTable, type LeafKind } from './leaf-sql.ts';
import { doorSelect, latestHead, type StoredHead } from './log-store.ts';
import { checkTree } from './verify-tree.ts';
import type { Finding } from './finding.ts';
import { forgedContents, futureRows } from './verify-unlogged.ts';
import { kindsToJoin } from './verify-kinds.ts';
import { checkSlice, timeSlices } from './verify-slices.ts';
import { checkWitnessed, readLedger, type WitnessReport } from './verify-witness.ts';

/** What verify read and found, and the seconds each part took. */
export interface VerifyReport {
  treeSize: number;
  checkedLeaves: number;
  expired: number;
  /** The first `maxFindings` findings. */
  findings: Finding[];
  /** Every finding, counted (more than `findings` holds when the cap was reached). */
  found: Record<Finding['what'], number>;
  seconds: { records: number; tree: number; witness: number; contents: number };
  /** The kinds whose rows were joined with their leaves slice by slice (the others matched them as a whole). */
  joined: LeafKind[];
  /** The check against the witnessed checkpoints, when a ledger was given. */
  witness?: Omit<WitnessReport, 'problems'>;
}

/** Options: the leaves to check ([fromLeaf, toLeaf)), retention per kind in days, and the pinned key. */
export interface VerifyOptions {
  fromLeaf?: number;
  toLeaf?: number;
  /** Days each kind is kept (a kind not named is never removed by retention). */
  retentionDays: Partial<Record<LeafKind, number>>;
  publicKey?: string;
  now?: number;
  /** Leaves per slice (default 1,000,000). */
  chunk?: number;
  /** Findings kept in the report (default 10,000); the rest are counted. */
  maxFindings?: number;
  /** The checkpoints witnessed (a ledger's entries), the log's origin and the keys trusted to sign them. */
  witness?: { entries: Parameters<typeof readLedger>[0]; origin: string; keys: KeyObject[] };
  /** Rows dated this far after now are future-dated (default 5 minutes: clocks of hosts differ). */
  futureSkewMs?: number;
}

/** Where findings go: the first `max` kept, all counted. */
class FindingSink {
  readonly list: Finding[] = [];
  readonly found: Record<Finding['what'], number> = { altered: 0, deleted: 0, inserted: 0, log: 0, witness: 0, future: 0, content: 0 };
  constructor(private readonly max: number) {}
  add(f: Finding): void {
    this.found[f.what]++;
    if (this.list.length < this.max) this.list.push(f);
  }
}

/** Verifies the log against the segments. */
export async function verifyLog(ch: ClickHouseDoor, o: VerifyOptions): Promise<VerifyReport> {
  const head = await latestHead(doorSelect(ch));
  const size = head?.tree_size ?? 0;
  const from = Math.max(0, o.fromLeaf ?? 0);
  const to = Math.min(size, o.toLeaf ?? size);
  const sink = new FindingSink(o.maxFindings ?? 10_000);
  const seconds = { records: 0, tree: 0, witness: 0, contents: 0 };
  const joined: LeafKind[] = [];
  let witness: VerifyReport['witness'];
  const report = (expired: number): VerifyReport => ({ treeSize: size, checkedLeaves: Math.max(0, to - from), expired, findings: sink.list, found: sink.found, seconds, joined, ...(witness ? { witness } : {}) });
  const clock = () => performance.now() / 1000;
  let t = clock();
  // The tree first: its block roots, found equal to their leaves, serve the witness check.
  const tree = head ? await checkTree(ch, size, head.root_hash) : [];
  seconds.tree = clock() - t;
  t = clock();
  const storedBlocks = tree.some((f) => f.leaf !== undefined) ? 0 : Math.floor(size / BLOCK);
  // What was witnessed, listed first: a history rewritten with its heads has no head left to say so.
  if (o.witness) witness = await witnessCheck(ch, o.witness, head, storedBlocks, sink);
  seconds.witness = clock() - t;
  t = clock();
  const now = o.now ?? Date.now();
  const add = (f: Finding) => sink.add(f);
  await futureRows(ch, now + (o.futureSkewMs ?? 300_000), add);
  await forgedContents(ch, add);
  seconds.contents = clock() - t;
  if (!head) return report(0);
  if (o.publicKey && !headSigned(head, publicKeyFrom(o.publicKey))) sink.add({ what: 'log', detail: `the newest head (tree of ${size}) is not signed by the key given` });
  t = clock();
  let expired = 0;
  if (from < to) {
    const kinds = await kindsPresent(ch);
    const expiredBefore = (kind: LeafKind) => (o.retentionDays[kind] === undefined ? Number.NEGATIVE_INFINITY : now - o.retentionDays[kind] * 86_400_000);
    const slices = await timeSlices(ch, from, to, o.chunk ?? 1_000_000, to === size ? head.built_to_ms : undefined);
    // The whole log: kinds whose rows are exactly their leaves need no join.
    const first = from === 0 && to === size ? await kindsToJoin(ch, kinds, { size, hi: slices.at(-1)?.hi ?? 0, expiredBefore }) : { join: kinds, expired: 0 };
    expired += first.expired;
    joined.push(...first.join);
    for (const slice of first.join.length > 0 ? slices : []) {
      for (const kind of first.join) expired += await checkSlice(ch, { kind, ...slice, from, to, expiredBefore: expiredBefore(kind) }, sink);
    }
  }
  seconds.records = clock() - t;
  for (const f of tree) sink.add({ what: 'log', ...f });
  return report(expired);
}

/**
 * The kinds with a leaf or a row at all: a kind with neither (no budgets, no MCP gateway) would cost
 * a pass over each slice's leaves for nothing. Rows counted from the parts' metadata.
 */
async function kindsPresent(ch: ClickHouseDoor): Promise<LeafKind[]> {
  const logged = new Set((await ch.select<{ kind: string }>('SELECT DISTINCT kind FROM {db:Identifier}.audit_log_leaves')).map((r) => r.kind));
  const present: LeafKind[] = [];
  for (const kind of LEAF_KINDS) {
    if (logged.has(kind)) present.push(kind);
    else if (Number((await ch.select<{ n: string }>(`SELECT count() AS n FROM {db:Identifier}.${leafTable(kind)}`))[0]?.n ?? 0) > 0) present.push(kind);
  }
  return present;
}

/** The witnessed checkpoints against the stored log; each problem a finding. */
async function witnessCheck(ch: ClickHouseDoor, w: NonNullable<VerifyOptions['witness']>, head: StoredHead | undefined, storedBlocks: number, sink: FindingSink): Promise<VerifyReport['witness']> {
  const ledger = await readLedger(w.entries, w);
  const [n] = await ch.select<{ n: string }>('SELECT max(leaf_index) + 1 AS n FROM {db:Identifier}.audit_log_leaves HAVING count() > 0');
  const r = await checkWitnessed(ch, ledger, { origin: w.origin, keys: w.keys, storedLeaves: Number(n?.n ?? 0), storedBlocks, ...(head ? { newestHead: head } : {}) });
  for (const p of r.problems) sink.add({ what: 'witness', detail: p.detail });
  const { problems: _problems, ...rest } = r;
  return rest;
}
