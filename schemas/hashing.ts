/**
 * Hashes and content helpers shared by emitters and the ingest checks (SPEC §1, §2, I5, I7).
 */
import { hash } from 'node:crypto';
import { canonicalArgs, type JsonValue } from './canonical-json.ts';

/** Lowercase hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  // One-shot crypto.hash (Node ≥ 20.12) is ~2× faster than createHash for packet-sized inputs.
  return hash('sha256', text, 'hex');
}

const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * RFC 9562 UUIDv5 of `name` (UTF-8) in `namespace` (its 16 bytes): the uuid package's v5, in one
 * hash call on the joined bytes — the package converts the name through a per-character loop,
 * which was most of the cost of the ids an OTLP export derives for every span it stores.
 */
export function uuidV5(name: string, namespace: Uint8Array): string {
  const nameBytes = Buffer.from(name, 'utf8');
  const joined = Buffer.allocUnsafe(namespace.length + nameBytes.length);
  joined.set(namespace, 0);
  joined.set(nameBytes, namespace.length);
  const b = hash('sha1', joined, 'buffer');
  const h = b.toString('hex', 0, 16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${HEX_BYTE[(b[6]! & 0x0f) | 0x50]}${h.slice(14, 16)}-${HEX_BYTE[(b[8]! & 0x3f) | 0x80]}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** args_hash of SPEC §2: SHA-256 of `json.dumps(args, sort_keys=True)`. */
export function argsHash(args: JsonValue): string {
  return sha256Hex(canonicalArgs(args));
}

/** Number of characters kept in an output's sample. */
export const SAMPLE_CHARS = 500;

/** Byte size of a string's UTF-8 encoding (the size_bytes of a ToolOutput). */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The first 500 characters of content, counted in Unicode code points as Python's
 * `content[:500]` counts them (a surrogate pair is one character).
 */
export function contentSample(text: string): string {
  if (text.length <= SAMPLE_CHARS) return text;
  let units = 0;
  for (let chars = 0; chars < SAMPLE_CHARS && units < text.length; chars++) {
    const c = text.charCodeAt(units);
    units += c >= 0xd800 && c <= 0xdbff && units + 1 < text.length ? 2 : 1;
  }
  return text.slice(0, units);
}

/** content_hash, size_bytes and sample of serialized content, as an emitter should send them. */
export function describeContent(text: string): { content_hash: string; size_bytes: number; sample: string } {
  return { content_hash: sha256Hex(text), size_bytes: utf8ByteLength(text), sample: contentSample(text) };
}
