/**
 * Checks a proof of inclusion offline (`tool-audit verify-proof`): the leaf's data hashes to the
 * leaf, the head is signed by the key given (not the one the proof carries: the database is what
 * is being checked), and the path leads from the leaf to the signed root. Pure.
 */
import type { KeyObject } from 'node:crypto';
import { leafHash, verifyConsistency, verifyInclusion } from '../../schemas/merkle.ts';
import { headSigned, keyId, type TreeHead } from './heads.ts';

/** A proof as GET /v1/calls/{call_id}/proof serves it. */
export interface ProofFile {
  leaf: { kind: string; key: string; index: number; hash: string; data: string };
  path: string[];
  head: TreeHead;
}

/** Each check and whether it held; `ok` when every one did. */
export interface ProofVerdict {
  ok: boolean;
  checks: Array<{ check: string; ok: boolean; detail?: string }>;
}

/** A consistency proof as GET /v1/log/consistency serves it. */
export interface ConsistencyFile {
  from: TreeHead;
  to: TreeHead;
  proof: string[];
}

/** Checks a consistency proof: both heads signed by the key, the older tree a prefix of the newer. */
export function checkConsistency(p: ConsistencyFile, publicKey: KeyObject): ProofVerdict {
  const checks = [
    { check: 'the older head is signed by the key given', ok: headSigned(p.from, publicKey), detail: `tree of ${p.from.tree_size}` },
    { check: 'the newer head is signed by the key given', ok: headSigned(p.to, publicKey), detail: `tree of ${p.to.tree_size}` },
    {
      check: 'the older tree is a prefix of the newer',
      ok: verifyConsistency(p.from.tree_size, p.to.tree_size, Buffer.from(p.from.root_hash, 'hex'), Buffer.from(p.to.root_hash, 'hex'), p.proof.map((h) => Buffer.from(h, 'hex'))),
      detail: `${p.from.root_hash} → ${p.to.root_hash}`,
    },
  ];
  return { ok: checks.every((c) => c.ok), checks };
}

/** Checks a proof against the public key the caller trusts. */
export function checkProof(p: ProofFile, publicKey: KeyObject): ProofVerdict {
  const data = leafHash(Buffer.from(p.leaf.data, 'utf8')).toString('hex');
  const checks = [
    { check: 'the leaf is the record', ok: data === p.leaf.hash.toLowerCase(), detail: `SHA-256(0x00 ‖ data) = ${data}` },
    { check: 'the head is signed by the key given', ok: headSigned(p.head, publicKey), detail: `key ${keyId(publicKey)}, head signed by ${p.head.key_id}` },
    {
      check: 'the leaf is in the signed tree',
      ok: verifyInclusion(p.leaf.index, p.head.tree_size, Buffer.from(p.leaf.hash, 'hex'), p.path.map((h) => Buffer.from(h, 'hex')), Buffer.from(p.head.root_hash, 'hex')),
      detail: `leaf ${p.leaf.index} of ${p.head.tree_size}, root ${p.head.root_hash}`,
    },
  ];
  return { ok: checks.every((c) => c.ok), checks };
}
