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
import { keyFilter, keyPlaceScalar, keysFilter, leafFields, leafTextsSelect, type LeafKind } from '../analyzers/audit-log/leaf-sql.ts';
import { fetchTiles, headsBetween, LEAF_AT_CREATED_SCALAR, latestHeadAnd, leafOf, logTiles, type LogSelect } from '../analyzers/audit-log/log-store.ts';
import { planReads, rangeHasher } from '../analyzers/audit-log/tiles.ts';
import { consistencyPath, inclusionPath, inclusionRanges } from '../schemas/merkle.ts';
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
export async function inclusionProof(ch: StatementRunner, db: string, kind: LeafKind, key: string, ctx: QueryContext): Promise<InclusionProof | NoProof> {
  const sel: LogSelect = (sql, params) => runQuery(ch, { name: 'audit_log', sql, settings: { max_threads: 1 } }, { db, ...params }, ctx);
  // Three round trips when nothing was changed: on the embedded engine statements with parameters
  // run one at a time, so what does not depend on each other is read in one statement.
  // 1. The newest head, and the record's created_at (and a call's task) from its keys table. An id
  //    the keys table does not know is unknown: no scan of the table's ids for it, whatever a caller
  //    sends.
  const place = keyPlaceScalar(kind);
  const first = await latestHeadAnd<[string, string]>(sel, place ?? 'NULL', { key });
  const head = first.head;
  if (place && !first.x) return { why: 'unknown' };
  const createdMs = first.x ? Number(first.x[0]) : undefined;
  const task = first.x?.[1] || undefined;
  // 2. The row by its primary key and, beside it, its leaf at that created_at.
  const found = await rowOf(sel, kind, createdMs === undefined ? { filter: keyFilter(kind), params: { key } } : { filter: keyFilter(kind, task !== undefined), params: { key, kind, created: createdMs, at: createdMs, ...(task === undefined ? {} : { task }) } });
  // A row whose created_at or task was changed is not where the keys table says: found through the
  // id's bloom filter, it then fails its check, as it should.
  const row = found ?? (place ? await rowOf(sel, kind, { filter: keysFilter(kind), params: { keys: [key] } }) : undefined);
  if (!row) return { why: 'unknown' };
  const early = found ? found.leaf : createdMs === undefined ? undefined : await leafOf(sel, kind, key, { createdMs });
  const storedMs = Number(row.stored_ms);
  // Else the leaf at the row's storage time; a row the log should hold but at neither time (its
  // times were changed) has its leaf looked up by key alone, and then fails its check.
  const leaf =
    early ?? (await leafOf(sel, kind, key, { storedMs })) ?? (head && storedMs <= head.built_to_ms ? await leafOf(sel, kind, key) : undefined);
  if (!leaf || !head || head.tree_size <= leaf.index) return { why: 'not_yet' };
  // 3. The ranges the path needs are known before any is read: their hashes are fetched at once.
  const tiles = await fetchTiles(sel, planReads(inclusionRanges(leaf.index, head.tree_size)));
  const path = await inclusionPath(leaf.index, head.tree_size, rangeHasher(tiles));
  return { leaf: { kind, key, index: leaf.index, hash: leaf.hash, data: row.data }, path: path.map((p) => p.toString('hex')), head };
}

/**
 * A record's row by `filter`: its leaf data and storage time, and — when the parameters place it
 * at a created_at ({at:Int64}) — the leaf found there, read in the same statement.
 */
async function rowOf(sel: LogSelect, kind: LeafKind, q: { filter: string; params: Record<string, unknown> }) {
  const atCreated = q.params.at !== undefined;
  const [r] = await sel<Record<string, string | null> & { leaf?: [string, string] | null }>(
    `${leafTextsSelect(kind, q.filter, atCreated ? `${LEAF_AT_CREATED_SCALAR} AS leaf` : undefined)} LIMIT 1`,
    q.params,
  );
  if (!r) return undefined;
  const data = leafDataOf(kind, leafFields(kind).map((_, i) => (r[`f${i}`] as string | null | undefined) ?? null));
  const leaf = r.leaf ? { index: Number(r.leaf[0]), hash: r.leaf[1] } : undefined;
  return { data, stored_ms: String(r.stored_ms), leaf };
}
