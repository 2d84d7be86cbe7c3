/**
 * Signing the audit log's heads, only ever for a history that extends the last one signed.
 *
 * The builder's last checkpoint lives outside ClickHouse (the ledger, AUDIT_LOG_DIR): someone
 * with SQL access can delete a call, its leaves, the heads above them and the builder's
 * watermark, and the builder would otherwise log what is left and sign it as if nothing had
 * happened. Before each signature the tree as stored is proved consistent with that checkpoint
 * (RFC 9162 consistency proof from the stored hashes): a tree that is smaller, or whose first
 * leaves no longer give the checkpoint's root, is refused — no head, an error naming both trees,
 * a metric, and /readyz failing — until the stored history extends the checkpoint again (a
 * restored backup) or an operator records a reset (`tool-audit audit-log accept-rewrite`).
 */
import type { KeyObject } from 'node:crypto';
import type { ClickHouseDoor } from '../../platform/clickhouse/door.ts';
import { chTime } from '../../platform/clickhouse/statement.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MetricsRegistry } from '../../platform/metrics.ts';
import { consistencyPath, verifyConsistency } from '../../schemas/merkle.ts';
import { noteVerifierKey, parseCheckpoint, signCheckpoint } from './checkpoint.ts';
import { headSigned, publicKeyText, signHead, type TreeHead } from './heads.ts';
import type { CheckpointLedger } from './ledger.ts';
import { doorSelect, latestHead, logTiles } from './log-store.ts';
import { rangeHasher } from './tiles.ts';

/** A tree: its size and root (hex). */
export interface TreeRef {
  size: number;
  root: string;
}

/** Why the builder does not sign: the tree stored does not extend the last checkpoint. */
export interface Refusal {
  reason: string;
  /** The last checkpoint signed (what the ledger holds). */
  last?: TreeRef;
  /** The tree as stored now. */
  tree: TreeRef;
  /** Since when (epoch ms). */
  sinceMs: number;
}

/** Sends a new checkpoint to witnesses; answers the cosignature lines they returned. */
export type WitnessSender = (note: string, last: TreeRef | undefined, proofFrom: (size: number) => Promise<Buffer[]>) => Promise<string[]>;

/** Dependencies of {@link createHeadSigner}. */
export interface HeadSignerDeps {
  clickhouse: ClickHouseDoor;
  logger: Logger;
  metrics?: MetricsRegistry;
  /** The Ed25519 key heads are signed with. */
  signingKey: KeyObject;
  /** The log's name in its checkpoints (their origin line, and the note key's name). */
  origin: string;
  /** Where checkpoints are kept outside ClickHouse. */
  ledger: CheckpointLedger;
  /** A retiring key of a planned rotation: it cosigns the next checkpoint, then `done` is called. */
  rotation?: { oldKey: KeyObject; done(): Promise<void> };
  /** Witnesses each new checkpoint is sent to. */
  witnesses?: WitnessSender;
}

/** Signs heads of trees that extend the last checkpoint; says why it refuses otherwise. */
export function createHeadSigner(deps: HeadSignerDeps) {
  let refused: Refusal | undefined;
  let rotation = deps.rotation;
  const hasher = () => rangeHasher(logTiles(doorSelect(deps.clickhouse)));

  const refuse = (r: Omit<Refusal, 'sinceMs'>, now: number): { refused: Refusal } => {
    refused = { ...r, sinceMs: refused?.sinceMs ?? now };
    deps.metrics?.set('tool_audit_audit_log_refused', 'The audit log builder refuses to sign: the stored history does not extend its last checkpoint (1) or it does (0)', 1);
    deps.logger.error({ last_checkpoint: r.last, stored_tree: r.tree, since: new Date(refused.sinceMs).toISOString() }, `audit log: no head signed: ${r.reason}`);
    return { refused };
  };

  /** The last tree signed: the ledger's checkpoint, or (a ledger still empty) the newest head this key signed in ClickHouse. */
  const lastTree = async (): Promise<TreeRef | string | undefined> => {
    const note = await deps.ledger.latest();
    if (note === undefined) {
      const head = await latestHead(doorSelect(deps.clickhouse));
      return head && headSigned(head, deps.signingKey) ? { size: head.tree_size, root: head.root_hash } : undefined;
    }
    const c = parseCheckpoint(note);
    if (typeof c === 'string') return `the ledger's checkpoint (${deps.ledger.dir}/checkpoint) cannot be read: ${c}`;
    if (c.origin !== deps.origin) return `the ledger's checkpoint is of the log "${c.origin}", this builder signs "${deps.origin}" (AUDIT_LOG_ORIGIN, or another AUDIT_LOG_DIR)`;
    return { size: c.size, root: c.root };
  };

  return {
    /** Why signing is refused, while it is. */
    refusal: (): Refusal | undefined => refused,

    /** Signs the tree of `size` leaves if it extends the last checkpoint (nothing when it is that checkpoint). */
    async sign(size: number, builtTo: number, now: number): Promise<{ head?: TreeHead; refused?: Refusal }> {
      const range = hasher();
      const tree = { size, root: (await range(0, size)).toString('hex') };
      const last = await lastTree();
      if (typeof last === 'string') return refuse({ reason: last, tree }, now);
      if (last && last.size > size) return refuse({ reason: `the log holds ${size} leaves, fewer than the ${last.size} of its last checkpoint (root ${last.root}): leaves were removed`, last, tree }, now);
      if (last && last.size === size && last.root !== tree.root) return refuse({ reason: `the log's ${size} leaves give root ${tree.root}, its last checkpoint of that size says ${last.root}: leaves were changed`, last, tree }, now);
      if (last && last.size < size) {
        const proof = await consistencyPath(last.size, size, range);
        if (!verifyConsistency(last.size, size, Buffer.from(last.root, 'hex'), Buffer.from(tree.root, 'hex'), proof)) {
          const prefix = (await range(0, last.size)).toString('hex');
          return refuse({ reason: `the log's first ${last.size} leaves give root ${prefix}, its last checkpoint of that size says ${last.root}: the history it signed was rewritten`, last, tree }, now);
        }
      }
      if (refused) deps.logger.warn({ tree, refused_since: new Date(refused.sinceMs).toISOString() }, 'audit log: the stored history extends the last checkpoint again; signing resumes');
      refused = undefined;
      deps.metrics?.set('tool_audit_audit_log_refused', 'The audit log builder refuses to sign: the stored history does not extend its last checkpoint (1) or it does (0)', 0);
      if (last && last.size === size) return {};
      const head = await signAndKeep({ ...deps, rotation }, tree, last, builtTo, now, range);
      rotation = undefined; // its one cosigned checkpoint is signed
      return { head };
    },
  };
}

/** Signs the head and its checkpoint; keeps the checkpoint in the ledger first, then in ClickHouse. */
async function signAndKeep(deps: HeadSignerDeps, tree: TreeRef, last: TreeRef | undefined, builtTo: number, now: number, range: ReturnType<typeof rangeHasher>): Promise<TreeHead> {
  const head = signHead({ tree_size: tree.size, root_hash: tree.root, built_to_ms: builtTo, signed_at_ms: now }, deps.signingKey);
  const keys = [{ name: deps.origin, key: deps.signingKey }, ...(deps.rotation ? [{ name: deps.origin, key: deps.rotation.oldKey }] : [])];
  const note = signCheckpoint({ origin: deps.origin, size: tree.size, root: tree.root }, keys);
  const cosignatures = deps.witnesses ? await deps.witnesses(note, last, (from) => consistencyPath(from, tree.size, range)) : [];
  // The ledger first: it is the record the next tree is proved against; a crash before the
  // ClickHouse row only means the next run's head is the first the API serves.
  await deps.ledger.addCheckpoint(note, now, cosignatures);
  if (deps.rotation) {
    await deps.ledger.append({ type: 'rotation', at_ms: now, old_key: noteVerifierKey(deps.origin, deps.rotation.oldKey), new_key: noteVerifierKey(deps.origin, deps.signingKey) });
    await deps.rotation.done();
    deps.logger.info({ old_key: noteVerifierKey(deps.origin, deps.rotation.oldKey), new_key: noteVerifierKey(deps.origin, deps.signingKey) }, 'audit log: key rotated (the first checkpoint of the new key is signed by the old one too)');
  }
  await deps.clickhouse.insertRows('audit_log_heads', [
    {
      key: `head/${tree.size}/${now}`,
      row: { tree_size: tree.size, root_hash: head.root_hash, built_to: chTime(builtTo), signed_at: chTime(now), key_id: head.key_id, signature: head.signature, public_key: publicKeyText(deps.signingKey), checkpoint: note },
    },
  ]);
  deps.logger.info({ tree_size: tree.size, root: tree.root, checkpoint: note }, 'audit log checkpoint signed');
  return head;
}
