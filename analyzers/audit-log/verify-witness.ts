/**
 * `tool-audit verify` against what was witnessed: the stored log proved consistent with every
 * checkpoint of a ledger (the builder's own, AUDIT_LOG_DIR/checkpoints.jsonl, or one given), so a
 * history rewritten in ClickHouse — leaves, heads and the builder's watermark included — is
 * caught however well the database's own tables agree with each other.
 *
 * For each checkpoint of size s the root of the stored leaves [0, s) is computed and compared.
 * Checkpoints are taken in size order, the tree's roots of complete blocks of 256 leaves computed
 * by ClickHouse where the leaves are and folded into a compact range (the perfect subtrees of the
 * prefix, RFC 9162's left-to-right decomposition), and only the < 256 leaves past the last whole
 * block read per checkpoint: one pass over the leaves whatever the number of checkpoints.
 * Signatures: each checkpoint must be signed by a trusted key (those given, and a new key once a
 * recorded rotation's checkpoint is signed by both); the newest head in ClickHouse too.
 */
import type { KeyObject } from 'node:crypto';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { nodeHash, rootOf } from '../../schemas/merkle.ts';
import { noteKeyHash, parseCheckpoint, parseNote, parseVerifierKey, signedBy } from './checkpoint.ts';
import { keyId } from './heads.ts';
import type { LedgerEntry } from './ledger.ts';
import { BLOCK, BLOCK_ROOTS } from './leaf-sql.ts';
import { doorSelect, logTiles, type StoredHead } from './log-store.ts';

/** A checkpoint of the ledger, as checked. */
interface Witnessed {
  line: number;
  atMs: number;
  size: number;
  root: string;
}

/** What the witness check found and read. */
export interface WitnessReport {
  /** Checkpoints of this log in the ledger, and of them those checked (after the last reset). */
  checkpoints: number;
  checked: number;
  /** Operator resets recorded: checkpoints before the last one are superseded, not checked. */
  resets: Array<{ atMs: number; reason: string }>;
  /** Problems, each one line naming the checkpoint and what contradicts it. */
  problems: Array<{ line?: number; size?: number; detail: string }>;
  /** The largest checkpoint the stored log agrees with, and the first it does not (the rewritten range lies between). */
  agreedTo: number;
  firstContradicted?: Witnessed;
}

/** Options: the log's origin and the keys trusted to sign its checkpoints. */
export interface WitnessOptions {
  origin: string;
  keys: KeyObject[];
  /** Leaves stored in the log (count of audit_log_leaves indexes). */
  storedLeaves: number;
  /** Blocks of 256 leaves from the first whose stored roots were found equal to their leaves (verify's tree check). */
  storedBlocks?: number;
  newestHead?: StoredHead;
}

/** Reads a ledger's entries into what the check needs (the checkpoints of this origin after the last reset). */
export async function readLedger(entries: (onEntry: (e: LedgerEntry, line: number) => void) => Promise<{ lines: number; bad: number }>, o: Pick<WitnessOptions, 'origin' | 'keys'>) {
  const trusted = new Map(o.keys.map((k) => [noteKeyHash(o.origin, k).toString('hex'), k]));
  let list: Witnessed[] = [];
  let all = 0;
  const resets: WitnessReport['resets'] = [];
  const problems: WitnessReport['problems'] = [];
  let previous: string | undefined;
  const read = await entries((e, line) => {
    if (e.type === 'reset') {
      resets.push({ atMs: e.at_ms, reason: e.reason });
      if (![...trusted.values()].some((k) => signedBy(e.note, o.origin, k))) problems.push({ line, detail: `the reset of line ${line} is signed by no trusted key` });
      list = [];
      return;
    }
    if (e.type === 'rotation') {
      // A new key is trusted once the checkpoint before its record carries its signature and a trusted one.
      const next = parseVerifierKey(e.new_key);
      if (typeof next === 'string' || !previous) return void problems.push({ line, detail: `the key rotation of line ${line} names no usable key or follows no checkpoint` });
      const old = [...trusted.values()].find((k) => signedBy(previous as string, o.origin, k));
      if (old && signedBy(previous, o.origin, next.key)) trusted.set(noteKeyHash(o.origin, next.key).toString('hex'), next.key);
      else problems.push({ line, detail: `the key rotation of line ${line} is not cosigned by a trusted key and the new one` });
      return;
    }
    const c = parseCheckpoint(e.note);
    if (typeof c === 'string') return void problems.push({ line, detail: `line ${line} is no checkpoint: ${c}` });
    if (c.origin !== o.origin) return;
    all++;
    previous = e.note;
    if (![...trusted.values()].some((k) => signedBy(e.note, o.origin, k))) {
      const by = c.signatures.map((s) => `${s.name}+${s.keyHash}`).join(', ');
      problems.push({ line, size: c.size, detail: `the checkpoint of ${c.size} leaves (line ${line}) is signed by no trusted key (signed by ${by})` });
      return;
    }
    list.push({ line, atMs: e.at_ms, size: c.size, root: c.root });
  });
  if (read.bad > 0) problems.push({ detail: `${read.bad} line(s) of the ledger are not entries (cut short or altered)` });
  return { list, all, resets, problems, trusted };
}

/** Proves the stored log consistent with each checkpoint; names the first it contradicts. */
export async function checkWitnessed(ch: ClickHouseDoor, ledger: Awaited<ReturnType<typeof readLedger>>, o: WitnessOptions): Promise<WitnessReport> {
  const problems = [...ledger.problems];
  const sorted = [...ledger.list].sort((a, b) => a.size - b.size || a.line - b.line);
  let agreedTo = 0;
  let firstContradicted: Witnessed | undefined;
  const contradicted = (w: Witnessed, detail: string) => {
    problems.push({ line: w.line, size: w.size, detail });
    if (!firstContradicted || w.line < firstContradicted.line) firstContradicted = w;
  };
  const blocks = blockRoots(ch, Math.min(o.storedLeaves, sorted.at(-1)?.size ?? 0), o.storedBlocks ?? 0);
  const range = compactRange();
  for (let k = 0; k < sorted.length; k += TAIL_BATCH) {
    const batch = sorted.slice(k, k + TAIL_BATCH);
    const tails = await tailLeaves(ch, batch.filter((w) => w.size <= o.storedLeaves).map((w) => [w.size - (w.size % BLOCK), w.size]));
    for (const w of batch) {
      if (w.size > o.storedLeaves) {
        contradicted(w, `the checkpoint of ${w.size} leaves (line ${w.line}, ${iso(w.atMs)}) is not extended: the stored log has ${o.storedLeaves} leaves`);
        continue;
      }
      const whole = w.size - (w.size % BLOCK);
      let gap = false;
      while (range.size() < whole && !gap) {
        const next = await blocks.next();
        if (next.done) gap = true;
        else range.push(next.value);
      }
      if (gap) {
        contradicted(w, `the stored log lacks leaves of the block from ${range.size()}, which the checkpoint of ${w.size} leaves (line ${w.line}) covers`);
        continue;
      }
      const tail = [];
      for (let i = whole; i < w.size; i++) tail.push(tails.get(i));
      if (tail.some((t) => t === undefined)) {
        contradicted(w, `the stored log lacks leaves between ${whole} and ${w.size}, which the checkpoint of ${w.size} leaves (line ${w.line}) covers`);
        continue;
      }
      const root = range.root(tail.length ? rootOf(tail as Buffer[]) : undefined).toString('hex');
      if (root === w.root) agreedTo = Math.max(agreedTo, w.size);
      else contradicted(w, `the checkpoint of ${w.size} leaves (line ${w.line}, ${iso(w.atMs)}) has root ${w.root}; the stored log's first ${w.size} leaves give ${root}`);
    }
  }
  await blocks.return(undefined);
  if (firstContradicted) {
    const before = sorted.filter((w) => w.size < (firstContradicted as Witnessed).size && w.size <= agreedTo).at(-1)?.size ?? 0;
    problems.unshift({ line: firstContradicted.line, size: firstContradicted.size, detail: `history rewritten: leaves in [${before}, ${firstContradicted.size}) are not those witnessed (the stored log agrees with the checkpoint of ${before} leaves, not with that of ${firstContradicted.size}, line ${firstContradicted.line})` });
  }
  problems.push(...headProblems(o.newestHead, o.origin, ledger.trusted, sorted.at(-1)));
  return { checkpoints: ledger.all, checked: sorted.length, resets: ledger.resets, problems, agreedTo, ...(firstContradicted ? { firstContradicted } : {}) };
}

/** The newest head in ClickHouse: signed by a key the ledger trusts, and no larger than what was witnessed. */
function headProblems(head: StoredHead | undefined, origin: string, trusted: Map<string, KeyObject>, newest: Witnessed | undefined): WitnessReport['problems'] {
  if (!head) return [];
  const out: WitnessReport['problems'] = [];
  const known = [...trusted.values()];
  const byKnown = head.checkpoint ? known.some((k) => signedBy(head.checkpoint as string, origin, k)) : known.some((k) => keyId(k) === head.key_id);
  if (!byKnown) {
    const note = head.checkpoint ? parseNote(head.checkpoint) : undefined;
    const by = note && typeof note !== 'string' ? note.signatures.map((s) => `${s.name}+${s.keyHash}`).join(', ') : `key ${head.key_id}`;
    out.push({ size: head.tree_size, detail: `the newest head in ClickHouse (tree of ${head.tree_size}) is signed by ${by}, a key that signed no checkpoint of the ledger` });
  }
  if (newest && head.tree_size > newest.size) out.push({ size: head.tree_size, detail: `the newest head in ClickHouse (tree of ${head.tree_size}) is larger than any checkpoint witnessed (${newest.size}): it was never witnessed` });
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** Checkpoints whose tail leaves are read in one statement. */
const TAIL_BATCH = 500;

/**
 * Leaf hashes of the ranges (each inside one block of 256), in one statement naming their blocks:
 * a set of a few hundred block numbers rather than of every index (bound arrays of many
 * thousands of values are slow on the embedded engine).
 */
async function tailLeaves(ch: ClickHouseDoor, ranges: Array<[number, number]>): Promise<Map<number, Buffer>> {
  const blocks = new Set<number>();
  for (const [a, b] of ranges) if (b > a) blocks.add(Math.floor(a / BLOCK));
  if (blocks.size === 0) return new Map();
  const rows = await ch.select<{ i: string; h: string }>(
    `SELECT leaf_index AS i, lower(hex(leaf_hash)) AS h FROM {db:Identifier}.audit_log_leaves WHERE intDiv(leaf_index, ${BLOCK}) IN {blocks:Array(UInt64)} ORDER BY leaf_index LIMIT 1 BY leaf_index`,
    { blocks: [...blocks] },
  );
  return new Map(rows.map((r) => [Number(r.i), Buffer.from(r.h, 'hex')]));
}

/**
 * The roots of whole blocks of 256 leaves below `upTo`, in order. The first `storedBlocks` are read
 * from the stored level-8 roots — those verify's tree check found equal to their leaves in the same
 * run (computing them again was most of this check's time: 1.3 s per 2.4 M leaves) — the rest
 * computed where the leaves are, a million leaves a statement.
 */
async function* blockRoots(ch: ClickHouseDoor, upTo: number, storedBlocks: number): AsyncGenerator<Buffer, void, undefined> {
  const blocks = Math.floor(upTo / BLOCK);
  const tiles = logTiles(doorSelect(ch));
  let next = 0;
  while (next < Math.min(blocks, storedBlocks)) {
    const end = Math.min(blocks, storedBlocks, next + 65_536);
    const roots = await tiles.nodes(8, next, end);
    // A root missing somewhere in the range: computed from the leaves from here on.
    if (roots.length !== end - next) break;
    for (const r of roots) yield r;
    next = end;
  }
  const STEP = 4096;
  for (let b0 = next; b0 < blocks; b0 += STEP) {
    const b1 = Math.min(blocks, b0 + STEP);
    const rows = await ch.select<{ blk: string; c: string; h: string }>(`SELECT blk, c, lower(hex(l[1])) AS h FROM (${BLOCK_ROOTS}) ORDER BY blk`, { a: b0 * BLOCK, b: b1 * BLOCK });
    let expect = b0;
    for (const r of rows) {
      if (Number(r.blk) !== expect || Number(r.c) !== BLOCK) return; // a block with leaves missing: the prefix ends there
      expect++;
      yield Buffer.from(r.h, 'hex');
    }
    if (expect !== b1) return;
  }
}

/** Perfect subtrees covering leaves [0, size), largest first: the root of a prefix with a tail folded in. */
function compactRange() {
  const stack: Array<{ hash: Buffer; leaves: number }> = [];
  let size = 0;
  return {
    size: () => size,
    push(blockRoot: Buffer) {
      let node = { hash: blockRoot, leaves: BLOCK };
      while (stack.length && (stack.at(-1) as { leaves: number }).leaves === node.leaves) {
        const left = stack.pop() as { hash: Buffer; leaves: number };
        node = { hash: nodeHash(left.hash, node.hash), leaves: left.leaves * 2 };
      }
      stack.push(node);
      size += BLOCK;
    },
    /** RFC 9162's root of the prefix and the tail: each subtree, right to left, as the left child of what follows. */
    root(tail: Buffer | undefined): Buffer {
      let acc = tail;
      for (let i = stack.length - 1; i >= 0; i--) acc = acc ? nodeHash((stack[i] as { hash: Buffer }).hash, acc) : (stack[i] as { hash: Buffer }).hash;
      if (!acc) return rootOf([]);
      return acc;
    },
  };
}
