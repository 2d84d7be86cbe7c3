/**
 * Checks a proof of inclusion offline (`tool-audit verify-proof`): the leaf's data hashes to the
 * leaf, the head is signed by the key given (not the one the proof carries: the database is what
 * is being checked), and the path leads from the leaf to the signed root. Pure.
 */
import type { KeyObject } from 'node:crypto';
import { leafHash, verifyConsistency, verifyInclusion } from '../../schemas/merkle.ts';
import { signedBy } from './checkpoint.ts';
import { headSigned, keyId, type TreeHead } from './heads.ts';
import { leafKey, parseLeafData } from './leaf-data.ts';

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
    ...checkpointCheck(p.from, publicKey),
    ...checkpointCheck(p.to, publicKey),
  ];
  return { ok: checks.every((c) => c.ok), checks };
}

/** A head that carries its checkpoint: the note must be signed by the key and say the head's size and root. */
function checkpointCheck(head: ProofFile['head'] & { checkpoint?: string }, publicKey: KeyObject): ProofVerdict['checks'] {
  if (!head.checkpoint) return [];
  const origin = head.checkpoint.split('\n', 1)[0] ?? '';
  const says = `${origin}\n${head.tree_size}\n${Buffer.from(head.root_hash, 'hex').toString('base64')}\n\n`;
  return [{ check: 'the checkpoint is signed by the key given and says this head', ok: head.checkpoint.startsWith(says) && signedBy(head.checkpoint, origin, publicKey), detail: `origin ${origin}` }];
}

/** Checks a proof against the public key the caller trusts. */
export function checkProof(p: ProofFile, publicKey: KeyObject): ProofVerdict {
  const data = leafHash(Buffer.from(p.leaf.data, 'utf8')).toString('hex');
  const parsed = parseLeafData(p.leaf.data);
  const named = typeof parsed === 'string' ? { ok: false, detail: parsed } : { ok: parsed.kind === p.leaf.kind && leafKey(parsed.kind, parsed.fields) === p.leaf.key, detail: `the data is ${parsed.kind} ${leafKey(parsed.kind, parsed.fields)}` };
  const checks = [
    { check: 'the leaf is the record', ok: data === p.leaf.hash.toLowerCase(), detail: `SHA-256(0x00 ‖ data) = ${data}` },
    { check: `the record is the ${p.leaf.kind} ${p.leaf.key} the proof names`, ...named },
    { check: 'the head is signed by the key given', ok: headSigned(p.head, publicKey), detail: `key ${keyId(publicKey)}, head signed by ${p.head.key_id}` },
    {
      check: 'the leaf is in the signed tree',
      ok: verifyInclusion(p.leaf.index, p.head.tree_size, Buffer.from(p.leaf.hash, 'hex'), p.path.map((h) => Buffer.from(h, 'hex')), Buffer.from(p.head.root_hash, 'hex')),
      detail: `leaf ${p.leaf.index} of ${p.head.tree_size}, root ${p.head.root_hash}`,
    },
    ...checkpointCheck(p.head, publicKey),
  ];
  return { ok: checks.every((c) => c.ok), checks };
}
