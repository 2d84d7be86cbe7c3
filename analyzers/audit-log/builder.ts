/**
 * The audit log builder: a background job that appends every stored tool_call, output,
 * dependency and violation to the log as a leaf, in the order they were stored, stores the roots
 * of the subtrees it completes, and signs a tree head at a fixed interval — only a tree that
 * extends the last checkpoint it signed, which it keeps outside ClickHouse (signer.ts).
 *
 * One step: the rows stored since the watermark (at most `stepRows` of them, and none stored in
 * the last `graceMs`, so an insert still running is not overtaken) are numbered after the last
 * leaf and inserted by ClickHouse itself (INSERT … SELECT: the leaf hash is computed from the
 * row where it is). A row that already has a leaf is left out, so a step repeated after a crash
 * adds nothing twice, and a redelivered packet — never a second row — never a second leaf.
 * One builder per database: it runs in the process that runs the analyzer (`analyze`, or `serve`).
 */
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import { rootOf } from '../../schemas/merkle.ts';
import { periodic, type PeriodicJob } from '../scheduler.ts';
import { readWatermark, writeWatermark } from '../store.ts';
import type { TreeHead } from './heads.ts';
import { BLOCK, BLOCK_ROOTS, LATE_KINDS, LEAF_KINDS, leafSelect, storedColumn, leafTable, type LeafKind } from './leaf-sql.ts';
import { doorSelect, leafCount, logTiles } from './log-store.ts';
import { createHeadSigner, type HeadSignerDeps, type Refusal } from './signer.ts';
import { TILE_LEVELS } from './tiles.ts';

/** The builder's watermark in analyzer_progress: rows stored up to it are leaves. */
export const AUDIT_LOG_WATERMARK = 'audit-log';
const WATERMARK = AUDIT_LOG_WATERMARK;

/** Dependencies of {@link createAuditLogBuilder}. */
export interface AuditLogBuilderDeps extends Omit<HeadSignerDeps, 'clickhouse' | 'logger' | 'metrics'> {
  clickhouse: ClickHouseDoor;
  logger: Logger;
  metrics?: MetricsRegistry;
  /** How often a head is signed (when the tree grew). */
  headIntervalMs: number;
  /** Rows not sequenced until they are this old: an insert that began earlier may still be running. */
  graceMs?: number;
  /** Rows a step takes at most. */
  stepRows?: number;
  now?: () => number;
}

/** What one run did: leaves added, the tree's size, the head signed, or why none could be. */
export interface AuditLogRun {
  added: number;
  treeSize: number;
  head?: TreeHead;
  refused?: Refusal;
}

/** The builder job, and why it refuses to sign while it does (what /readyz reports). */
export type AuditLogBuilder = PeriodicJob<AuditLogRun> & { refusal(): Refusal | undefined };

/** The audit log builder job. */
export function createAuditLogBuilder(deps: AuditLogBuilderDeps): AuditLogBuilder {
  let lastHeadAt = 0;
  const signer = createHeadSigner(deps);
  // Kinds whose rows stored before the log knew them are all leaves: not looked up again.
  const backfilled = new Set<LeafKind>();
  const run = async (): Promise<AuditLogRun> => {
    const now = (deps.now ?? Date.now)();
    let added = 0;
    let size = await leafCount(deps.clickhouse);
    const before = size;
    // Steps until the backlog is in (each bounded), then one head: first the rows of kinds the log
    // took in later, stored before it did, then every kind's since the watermark.
    for (const lane of [...(await backfillLanes(deps.clickhouse, backfilled)), mainLane(now - (deps.graceMs ?? 60_000))]) {
      for (;;) {
        const step = await appendStep(deps, lane, size);
        added += step.added;
        size += step.added;
        if (!step.more) break;
      }
    }
    if (size > before) await storeNodes(deps.clickhouse, before, size);
    deps.metrics?.set('tool_audit_audit_log_leaves', 'Leaves of the audit log', size);
    const due = now - lastHeadAt >= deps.headIntervalMs;
    if (!due || size === 0) return { added, treeSize: size };
    // At every head's time, grown or not: leaves removed or changed under an idle log are found
    // (and /readyz says so) without waiting for the next record. Unchanged, nothing is signed.
    lastHeadAt = now;
    const builtTo = Math.max(0, (await readWatermark(deps.clickhouse, WATERMARK)) - 1);
    const signed = await signer.sign(size, builtTo, now);
    return { added, treeSize: size, ...signed };
  };
  const job = periodic('audit log builder', run, deps.logger, (r, ms) => {
    if (r.added > 0) deps.logger.debug({ added: r.added, tree_size: r.treeSize, head: r.head?.root_hash, ms }, 'audit log grew');
  });
  return { ...job, refusal: () => signer.refusal() };
}


/** Rows appended by one watermark: which kinds, and up to when (epoch ms). */
interface Lane {
  kinds: readonly LeafKind[];
  watermark: string;
  horizonMs: number;
}

/** Every kind's rows stored since the builder's watermark, up to now minus the grace. */
const mainLane = (horizonMs: number): Lane => ({ kinds: LEAF_KINDS, watermark: WATERMARK, horizonMs });

/**
 * Kinds the log took in after it began (manifests, MCP definitions, quarantine records): their
 * rows stored before the first run that knew them lie behind the builder's watermark. Each gets a
 * lane of its own up to that watermark (recorded at that first run as `audit-log:since:<kind>`,
 * at least 1 ms so that "recorded" and "none" differ), appended in bounded steps like the rest.
 */
async function backfillLanes(ch: ClickHouseDoor, backfilled: Set<LeafKind>): Promise<Lane[]> {
  const lanes: Lane[] = [];
  for (const kind of LATE_KINDS.filter((k) => !backfilled.has(k))) {
    let since = await readWatermark(ch, `${WATERMARK}:since:${kind}`);
    if (since === 0) {
      since = Math.max(1, await readWatermark(ch, WATERMARK));
      await writeWatermark(ch, `${WATERMARK}:since:${kind}`, since);
    }
    const done = await readWatermark(ch, `${WATERMARK}:backfill:${kind}`);
    if (done < since) lanes.push({ kinds: [kind], watermark: `${WATERMARK}:backfill:${kind}`, horizonMs: since - 1 });
    else backfilled.add(kind);
  }
  return lanes;
}

const storedTimes = (kinds: readonly LeafKind[]) =>
  kinds.map((k) => `SELECT ${storedColumn(k)} AS t FROM {db:Identifier}.${leafTable(k)} WHERE ${storedColumn(k)} >= {from:DateTime64(3)} AND ${storedColumn(k)} <= {to:DateTime64(3)}`).join(' UNION ALL ');

async function appendStep(deps: AuditLogBuilderDeps, lane: Lane, size: number): Promise<{ added: number; more: boolean }> {
  const ch = deps.clickhouse;
  const from = chTime(await readWatermark(ch, lane.watermark));
  const horizon = chTime(lane.horizonMs);
  if (from > horizon) return { added: 0, more: false };
  const limit = deps.stepRows ?? 200_000;
  // Where this step ends: the stored_at of the limit-th row after the watermark (timestamps only).
  const [edge] = await ch.select<{ to: string; n: string }>(`SELECT toString(max(t)) AS to, count() AS n FROM (SELECT t FROM (${storedTimes(lane.kinds)}) ORDER BY t LIMIT {limit:UInt64})`, { from, to: horizon, limit });
  const last = !edge || Number(edge.n) < limit;
  const to = last ? horizon : edge.to;
  if (edge && Number(edge.n) > 0) {
    const window = (k: LeafKind) => `${storedColumn(k)} >= {from:DateTime64(3)} AND ${storedColumn(k)} <= {to:DateTime64(3)}`;
    await ch.command(
      `INSERT INTO {db:Identifier}.audit_log_leaves (leaf_index, kind, record_key, leaf_hash, stored_at, created_at)
       SELECT {size:UInt64} + row_number() OVER (ORDER BY stored_at, kind_rank, record_key) - 1, kind, record_key, leaf_hash, stored_at, created_at
       FROM (${lane.kinds.map((k) => leafSelect(k, window(k))).join(' UNION ALL ')})
       WHERE (kind, record_key) NOT IN (SELECT kind, record_key FROM {db:Identifier}.audit_log_leaves WHERE stored_at >= {from:DateTime64(3)})`,
      { from, to, size },
    );
  } else if (lane.watermark === WATERMARK) return { added: 0, more: false };
  const after = await leafCount(ch);
  // Every row stored up to `to` is a leaf now (the window has no LIMIT: ties at its edge are in):
  // the next step starts a millisecond later, so a window never collapses onto one instant. A
  // backfill lane with nothing left is marked done the same way.
  await writeWatermark(ch, lane.watermark, Date.parse(`${to.replace(' ', 'T')}Z`) + 1);
  return { added: after - size, more: !last };
}

/** Stores the roots of the subtrees of 2^8, 2^16, 2^24 leaves completed between sizes `before` and `after`. */
async function storeNodes(ch: ClickHouseDoor, before: number, after: number): Promise<void> {
  const tiles = logTiles(doorSelect(ch));
  // Level 8, from the leaves: computed where they are, a million leaves a statement (reading them
  // back to hash here grew with every leaf added); only blocks of all 256 leaves get a root.
  const firstBlock = Math.floor(before / BLOCK);
  const lastBlock = Math.floor(after / BLOCK);
  for (let b0 = firstBlock; b0 < lastBlock; b0 += 4096) {
    const b1 = Math.min(lastBlock, b0 + 4096);
    await ch.command(`INSERT INTO {db:Identifier}.audit_log_nodes (level, node_index, hash) SELECT 8, blk, lower(hex(l[1])) FROM (${BLOCK_ROOTS}) WHERE c = ${BLOCK}`, { a: b0 * BLOCK, b: b1 * BLOCK });
  }
  // Then each level above, lowest first: its roots are made of the level below's, 256 at a time.
  for (const level of TILE_LEVELS.filter((l) => l > 8).reverse()) {
    const size = 2 ** level;
    const first = Math.floor(before / size);
    const last = Math.floor(after / size);
    // 256 roots per read of what is below them (65,536 hashes): a catch-up of millions of
    // leaves read one block at a time took one statement per 256 leaves.
    for (let b0 = first; b0 < last; b0 += 256) {
      const b1 = Math.min(last, b0 + 256);
      const below = await tiles.nodes(level - 8, b0 * 256, b1 * 256);
      const rows = [];
      for (let b = b0; b < b1; b++) rows.push({ key: `${level}/${b}`, row: { level, node_index: b, hash: rootOf(below.slice((b - b0) * 256, (b - b0 + 1) * 256)).toString('hex') } });
      await ch.insertRows('audit_log_nodes', rows);
    }
  }
}
