/**
 * A record's proof of inclusion in the audit log (GET /v1/calls/{call_id}/proof, GET
 * /v1/outputs/{output_id}/proof): the leaf — the record as serialized into it, and its hash —
 * its inclusion path in the newest signed tree, and that tree's signed head. Everything
 * `tool-audit verify-proof` needs to check it offline with the public key alone. Reads the row
 * and, beside it, the leaf at the record's created_at; then at most ~255 stored hashes per tile
 * level per step of the path.
 */
import { z } from 'zod';
import { leafDataOf } from '../analyzers/audit-log/leaf-data.ts';
import { keyFilter, keyPlaceSelect, keysFilter, leafFields, leafTextsSelect, type LeafKind } from '../analyzers/audit-log/leaf-sql.ts';
import { fetchHashes, headsBetween, latestHead, leafOf, logTiles, type LogSelect, type StoredHead } from '../analyzers/audit-log/log-store.ts';
import type { PathCache } from '../analyzers/audit-log/path-cache.ts';
import { rangeHasher } from '../analyzers/audit-log/tiles.ts';
import { consistencyPath } from '../schemas/merkle.ts';
import { AppError } from '../platform/errors.ts';
import { runQuery, type QueryContext, type StatementRunner } from './sql.ts';

/** A signed tree head as served. */
export const treeHeadSchema = z.strictObject({
  tree_size: z.number().int(),
  root_hash: z.string().describe('hex'),
  built_to_ms: z.number().int().describe('every row stored up to then (epoch ms) is a leaf of this tree'),
  signed_at_ms: z.number().int(),
  key_id: z.string().describe('first 16 hex digits of SHA-256 of the raw Ed25519 public key'),
  signature: z.string().describe('Ed25519 over "tool-audit audit log head v1\\n<tree_size>\\n<root_hash>\\n<built_to_ms>\\n<signed_at_ms>\\n", base64'),
  public_key: z.string().describe('the signing key, base64 DER (SubjectPublicKeyInfo): check it against the one you pinned'),
  checkpoint: z.string().optional().describe('the same head as a C2SP tlog-checkpoint signed note (origin, size, base64 root, Ed25519 signature lines); absent for heads signed before checkpoints'),
});

/** A proof of inclusion. */
export const inclusionProofSchema = z.strictObject({
  leaf: z.strictObject({
    kind: z.string(),
    key: z.string(),
    index: z.number().int(),
    hash: z.string().describe('SHA-256(0x00 ‖ data), hex'),
    data: z.string().describe('the record as serialized into its leaf: a header line, then each field as <length>:<text>'),
  }),
  path: z.array(z.string()).describe('RFC 9162 inclusion path, hex, bottom first'),
  head: treeHeadSchema,
});
/** A proof of inclusion. */
export type InclusionProof = z.infer<typeof inclusionProofSchema>;

/** Why there is no proof. */
export type NoProof = { why: 'unknown' | 'not_yet' };

/** A consistency proof between two signed heads (GET /v1/log/consistency). */
export const consistencyProofSchema = z.strictObject({
  from: treeHeadSchema,
  to: treeHeadSchema,
  proof: z.array(z.string()).describe('RFC 9162 consistency proof from the older tree to the newer, hex'),
});
/** A consistency proof. */
export type ConsistencyProof = z.infer<typeof consistencyProofSchema>;

/**
 * The consistency proof between the signed heads of two tree sizes; null when the newer size has
 * no signed head or the sizes are not in order. An older size with no signed head stored, while
 * the newer has one, is no plain "not found": the head was removed or never signed, and the
 * caller holding a checkpoint of that size needs to know whether this history still extends it —
 * answered as a conflict naming the root the stored leaves give at that size.
 */
export async function consistencyProof(ch: StatementRunner, db: string, p: { fromSize: number; toSize: number }, ctx: QueryContext): Promise<ConsistencyProof | null> {
  const sel: LogSelect = (sql, params) => runQuery(ch, { name: 'audit_log_consistency', sql }, { db, ...params }, ctx);
  if (!(p.fromSize >= 1 && p.fromSize <= p.toSize)) return null;
  const [[from], [to]] = await Promise.all([headsBetween(sel, p.fromSize, p.fromSize, 1), headsBetween(sel, p.toSize, p.toSize, 1)]);
  if (!to) return null;
  const range = rangeHasher(logTiles(sel));
  if (!from) {
    const root = (await range(0, p.fromSize)).toString('hex');
    throw new AppError(
      'INTEGRITY',
      `no signed head of tree size ${p.fromSize} is stored, though one of ${p.toSize} is: it was removed or never signed. The stored log's first ${p.fromSize} leaves give root ${root}; if the checkpoint of that size you hold has another root, this history does not extend it (tool-audit verify proves the log against every checkpoint witnessed)`,
      { retryable: false },
    );
  }
  const proof = await consistencyPath(p.fromSize, p.toSize, range);
  return { from, to, proof: proof.map((b) => b.toString('hex')) };
}

/** Signed heads, oldest first (GET /v1/log/heads: what someone outside keeps). */
export const logHeadsSchema = z.strictObject({ heads: z.array(treeHeadSchema) });
/** Signed heads. */
export type LogHeads = z.infer<typeof logHeadsSchema>;

/** Parameters of {@link logHeads}: tree sizes [fromSize, toSize], at most `limit` heads. */
export interface LogHeadsParams {
  fromSize: number;
  toSize: number;
  limit: number;
}

/** Signed heads whose tree size is in the range, oldest first. */
export async function logHeads(ch: StatementRunner, db: string, p: LogHeadsParams, ctx: QueryContext): Promise<LogHeads> {
  const sel: LogSelect = (sql, params) => runQuery(ch, { name: 'audit_log_heads', sql }, { db, ...params }, ctx);
  const heads = await headsBetween(sel, p.fromSize, p.toSize, p.limit);
  return { heads };
}

/** The proof of a record, or why there is none: unknown record, or not in a signed tree yet. */
export async function inclusionProof(ch: StatementRunner, db: string, kind: LeafKind, key: string, ctx: QueryContext, paths: PathCache): Promise<InclusionProof | NoProof> {
  const sel: LogSelect = (sql, params) => runQuery(ch, { name: 'audit_log', sql, settings: { max_threads: 1 } }, { db, ...params }, ctx);
  const pathOf = (head: StoredHead, index: number) => paths.inclusionPath(head, index, (reads) => fetchHashes(sel, reads));
  const placeSql = keyPlaceSelect(kind);
  if (!placeSql) return proofByKey(sel, kind, key, pathOf);
  // The newest head beside the record's place in its keys table (an unknown id is unknown: no
  // scan of the table's ids for it, whatever a caller sends); then two lines side by side (the
  // read lane has two connections; a server runs them at once): the row by its primary key, and
  // the leaf at that created_at followed by its path.
  const [head, [at]] = await Promise.all([latestHead(sel), sel<{ created_ms: string; task: string }>(placeSql, { key })]);
  if (!at) return { why: 'unknown' };
  const createdMs = Number(at.created_ms);
  const task = at.task || undefined;
  const [found, early] = await Promise.all([
    rowOf(sel, kind, keyFilter(kind, task !== undefined), { key, created: createdMs, ...(task === undefined ? {} : { task }) }),
    leafOf(sel, kind, key, { createdMs }).then(async (leaf) => ({ leaf, path: head && leaf && leaf.index < head.tree_size ? await pathOf(head, leaf.index) : undefined })),
  ]);
  // A row whose created_at or task was changed is not where the keys table says: found through the
  // id's bloom filter, it then fails its check, as it should.
  const row = found ?? (await rowOf(sel, kind, keysFilter(kind), { keys: [key] }));
  if (!row) return { why: 'unknown' };
  const leaf = early.leaf ?? (await leafOfRow(sel, kind, key, row, head));
  if (!leaf || !head || head.tree_size <= leaf.index) return { why: 'not_yet' };
  const path = leaf === early.leaf && early.path ? early.path : await pathOf(head, leaf.index);
  return proofOf(kind, key, row.data, leaf, path, head);
}

type PathOf = (head: StoredHead, index: number) => Promise<Buffer[]>;

/** The proof of a record of a kind without a keys table: its row by key beside the newest head, then its leaf at its storage time. */
async function proofByKey(sel: LogSelect, kind: LeafKind, key: string, pathOf: PathOf): Promise<InclusionProof | NoProof> {
  const [head, row] = await Promise.all([latestHead(sel), rowOf(sel, kind, keyFilter(kind), { key })]);
  if (!row) return { why: 'unknown' };
  const leaf = await leafOfRow(sel, kind, key, row, head);
  if (!leaf || !head || head.tree_size <= leaf.index) return { why: 'not_yet' };
  return proofOf(kind, key, row.data, leaf, await pathOf(head, leaf.index), head);
}

/**
 * A record's leaf at its row's storage time; a row the log should hold but at no time it gives
 * (its times were changed) has its leaf looked up by key alone, and its proof then fails its check.
 */
async function leafOfRow(sel: LogSelect, kind: LeafKind, key: string, row: { stored_ms: string }, head: StoredHead | undefined) {
  const storedMs = Number(row.stored_ms);
  return (await leafOf(sel, kind, key, { storedMs })) ?? (head && storedMs <= head.built_to_ms ? await leafOf(sel, kind, key) : undefined);
}

function proofOf(kind: LeafKind, key: string, data: string, leaf: { index: number; hash: string }, path: Buffer[], head: StoredHead): InclusionProof {
  return { leaf: { kind, key, index: leaf.index, hash: leaf.hash, data }, path: path.map((p) => p.toString('hex')), head };
}

/** A record's row by `filter`: its leaf data and storage time. */
async function rowOf(sel: LogSelect, kind: LeafKind, filter: string, params: Record<string, unknown>) {
  const [r] = await sel<Record<string, string | null>>(`${leafTextsSelect(kind, filter)} LIMIT 1`, params);
  if (!r) return undefined;
  const data = leafDataOf(kind, leafFields(kind).map((_, i) => r[`f${i}`] ?? null));
  return { data, stored_ms: String(r.stored_ms) };
}
