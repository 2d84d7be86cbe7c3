/**
 * Checkpoints of the audit log as C2SP `tlog-checkpoint` signed notes (the format of Go's
 * checksum database, Sigstore Rekor v2 and every tlog-witness): a body of three lines — the
 * log's origin, the tree size, the root hash in base64 — then a blank line and one signature
 * line per key, `— <key name> <base64(4-byte key hash ‖ Ed25519 signature)>`. Anyone holding a
 * checkpoint can check it with the note verifier key alone, with any implementation of the
 * format (golang.org/x/mod/sumdb/note, transparency-dev/formats). Pure (node:crypto).
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** What a checkpoint says: the tree of `size` leaves of the log named `origin` has this root. */
export interface CheckpointBody {
  origin: string;
  size: number;
  /** Root hash, lower-case hex. */
  root: string;
}

/** A signature line of a note: the key's name, its 4-byte hash (hex) and the signature (base64). */
export interface NoteSignature {
  name: string;
  keyHash: string;
  signature: string;
}

/** A parsed signed note. */
export interface SignedCheckpoint extends CheckpointBody {
  /** The whole note, as signed and as kept. */
  note: string;
  signatures: NoteSignature[];
}

/** Signature algorithm byte of an Ed25519 note key. */
const ED25519 = 0x01;
const DASH = '\u2014';

const rawPublic = (key: KeyObject): Buffer => (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'der', type: 'spki' }).subarray(-32);

/** The 4-byte hash that names a key in a signature line: SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key). */
export function noteKeyHash(name: string, key: KeyObject): Buffer {
  return createHash('sha256').update(`${name}\n`).update(Buffer.from([ED25519])).update(rawPublic(key)).digest().subarray(0, 4);
}

/** The verifier key text (`name+hash+base64(0x01 ‖ key)`) others use to check this log's notes. */
export function noteVerifierKey(name: string, key: KeyObject): string {
  return `${name}+${noteKeyHash(name, key).toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), rawPublic(key)]).toString('base64')}`;
}

/** A verifier key text back to its name and public key; a string saying why when it is not one. */
export function parseVerifierKey(text: string): { name: string; key: KeyObject } | string {
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(text.trim());
  if (!m) return 'a note verifier key is name+8 hex digits+base64 key';
  const raw = Buffer.from(m[3] as string, 'base64');
  if (raw.length !== 33 || raw[0] !== ED25519) return 'only Ed25519 note keys (algorithm byte 0x01, 32-byte key) are known';
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw.subarray(1)]), format: 'der', type: 'spki' });
  if (noteKeyHash(m[1] as string, key).toString('hex') !== m[2]) return 'the key hash does not match the name and key';
  return { name: m[1] as string, key };
}

/** The body text a checkpoint's signatures cover. */
export function checkpointText(b: CheckpointBody): string {
  if (!b.origin || /[\n\r]/.test(b.origin)) throw new RangeError('a checkpoint origin is one non-empty line');
  return `${b.origin}\n${b.size}\n${Buffer.from(b.root, 'hex').toString('base64')}\n`;
}

/** Signs a body with each key (the first names the log; a rotation adds the old key). */
export function signNote(text: string, keys: ReadonlyArray<{ name: string; key: KeyObject }>): string {
  const lines = keys.map(({ name, key }) => `${DASH} ${name} ${Buffer.concat([noteKeyHash(name, key), sign(null, Buffer.from(text), key)]).toString('base64')}\n`);
  return `${text}\n${lines.join('')}`;
}

/** A signed checkpoint of the body. */
export function signCheckpoint(b: CheckpointBody, keys: ReadonlyArray<{ name: string; key: KeyObject }>): string {
  return signNote(checkpointText(b), keys);
}

/** A note's text and signatures; a string saying why when it is not a note. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } | string {
  const cut = note.lastIndexOf('\n\n');
  if (cut < 0 || !note.endsWith('\n')) return 'not a signed note (no blank line before the signatures, or no final newline)';
  const text = note.slice(0, cut + 1);
  const signatures: NoteSignature[] = [];
  for (const line of note.slice(cut + 2, -1).split('\n')) {
    const m = new RegExp(`^${DASH} (\\S+) ([A-Za-z0-9+/=]+)$`).exec(line);
    if (!m) return `not a signature line: ${JSON.stringify(line.slice(0, 80))}`;
    const raw = Buffer.from(m[2] as string, 'base64');
    if (raw.length < 5) return 'a signature shorter than its key hash';
    signatures.push({ name: m[1] as string, keyHash: raw.subarray(0, 4).toString('hex'), signature: raw.subarray(4).toString('base64') });
  }
  if (signatures.length === 0) return 'a note with no signature';
  return { text, signatures };
}

/** A checkpoint note's body and signatures; a string saying why when it is not one. */
export function parseCheckpoint(note: string): SignedCheckpoint | string {
  const n = parseNote(note);
  if (typeof n === 'string') return n;
  const [origin, size, root] = n.text.split('\n');
  if (!origin || !size || !/^(0|[1-9][0-9]*)$/.test(size) || root === undefined) return 'a checkpoint body is origin, size and base64 root, each on its line';
  const hash = Buffer.from(root, 'base64');
  if (hash.length !== 32 || hash.toString('base64') !== root) return 'a checkpoint root is 32 bytes in base64';
  return { origin, size: Number(size), root: hash.toString('hex'), note, signatures: n.signatures };
}

/** True when the note carries a valid signature of `name`'s `key`. */
export function signedBy(note: string, name: string, key: KeyObject): boolean {
  const n = parseNote(note);
  if (typeof n === 'string') return false;
  const hash = noteKeyHash(name, key).toString('hex');
  return n.signatures.some((s) => s.name === name && s.keyHash === hash && verifySignature(n.text, s.signature, key));
}

const verifySignature = (text: string, signature: string, key: KeyObject): boolean => {
  try {
    return verify(null, Buffer.from(text), key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
};
