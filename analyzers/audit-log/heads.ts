/**
 * Signed tree heads of the audit log: the text signed, Ed25519 signing and checking, and the key
 * id (the first 16 hex digits of SHA-256 of the raw public key). What `tool-audit verify-proof`
 * checks offline with nothing but the public key. Pure (node:crypto).
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** A signed tree head, as stored and served. */
export interface TreeHead {
  tree_size: number;
  /** Root hash, lower-case hex. */
  root_hash: string;
  /** Every row stored up to then (epoch ms) is a leaf of this tree. */
  built_to_ms: number;
  signed_at_ms: number;
  key_id: string;
  /** Ed25519 signature of {@link headText}, base64. */
  signature: string;
}

/** The text a head's signature covers: a version line, then each field on its own line. */
export function headText(h: Pick<TreeHead, 'tree_size' | 'root_hash' | 'built_to_ms' | 'signed_at_ms'>): string {
  return `tool-audit audit log head v1\n${h.tree_size}\n${h.root_hash}\n${h.built_to_ms}\n${h.signed_at_ms}\n`;
}

/** The id of a public key: the first 16 hex digits of SHA-256 of its raw 32 bytes. */
export function keyId(key: KeyObject): string {
  const raw = publicOf(key).export({ format: 'der', type: 'spki' }).subarray(-32);
  return createHash('sha256').update(raw).digest('hex').slice(0, 16);
}

/** A public key as text: base64 of its DER (SubjectPublicKeyInfo), what `--public-key` takes. */
export function publicKeyText(key: KeyObject): string {
  return publicOf(key).export({ format: 'der', type: 'spki' }).toString('base64');
}

/** The public part of a key (a public key is its own). */
const publicOf = (key: KeyObject): KeyObject => (key.type === 'public' ? key : createPublicKey(key));

/** A public key from {@link publicKeyText}'s text or a PEM. */
export function publicKeyFrom(text: string): KeyObject {
  const t = text.trim();
  return t.startsWith('-----BEGIN') ? createPublicKey(t) : createPublicKey({ key: Buffer.from(t, 'base64'), format: 'der', type: 'spki' });
}

/** Signs a head with an Ed25519 private key. */
export function signHead(h: Omit<TreeHead, 'key_id' | 'signature'>, privateKey: KeyObject): TreeHead {
  return { ...h, key_id: keyId(privateKey), signature: sign(null, Buffer.from(headText(h)), privateKey).toString('base64') };
}

/** True when the head's signature is the key's over its fields. */
export function headSigned(h: TreeHead, publicKey: KeyObject): boolean {
  try {
    return keyId(publicKey) === h.key_id && verify(null, Buffer.from(headText(h)), publicKey, Buffer.from(h.signature, 'base64'));
  } catch {
    return false;
  }
}
