/**
 * The key filter's snapshot on disk: a writer starts from it and catches up from the
 * segments, instead of reading and hashing every stored key again (~1 s per million keys).
 *
 * Layout: the magic `TAKFSNAP1\n`, the header's length (UInt32 LE), the header as JSON, then the
 * bits of each slice in order. Written to a temporary file and renamed, so a reader sees a whole
 * snapshot or the previous one. The bits are written while the filter keeps taking keys: a bit
 * only ever turns on, so a snapshot holds at least every key added before its `coveredAt`.
 */
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { GrowingKeyFilter, KeyFilter } from './key-filter.ts';

const MAGIC = Buffer.from('TAKFSNAP1\n');
/** The layout a snapshot's bits follow: one this code reads. */
export const KEY_SNAPSHOT_VERSION = 2 as const;

/** What a snapshot says of itself. */
const keySnapshotHeaderSchema = z.object({
  /** The filter's layout: 2, blocked (key-filter.ts); 1 spread a key's bits over the whole array. */
  version: z.literal(KEY_SNAPSHOT_VERSION),
  /** The database's name and UUID: a database dropped and made again is another one. */
  database: z.string(),
  databaseUuid: z.string(),
  /** Every key stored before this time (epoch ms, the writer's clock) is in the filter. */
  coveredAt: z.number().int(),
  /** Rows of each key source when the snapshot was taken: rows since then must all be caught up. */
  counts: z.record(z.string(), z.number().int().nonnegative()),
  sliceMaxBytes: z.number().int().positive(),
  slices: z.array(z.object({ bytes: z.number().int().positive(), added: z.number().int().nonnegative() })).min(1),
});
/** The header of a snapshot. */
export type KeySnapshotHeader = z.infer<typeof keySnapshotHeaderSchema>;

/** Writes the filter and its header to `path` (atomically: temporary file, then rename). */
export async function writeKeySnapshot(path: string, header: Omit<KeySnapshotHeader, 'slices'>, filter: GrowingKeyFilter): Promise<number> {
  const slices = [...filter.parts];
  const head = Buffer.from(JSON.stringify({ ...header, slices: slices.map((s) => ({ bytes: s.bytes, added: s.added })) } satisfies KeySnapshotHeader));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, 'w');
  try {
    await file.writeFile(Buffer.concat([MAGIC, len, head]));
    // The bit arrays are written as they are (no copy of hundreds of MB).
    for (const s of slices) await file.writeFile(new Uint8Array(s.bits.buffer, s.bits.byteOffset, s.bits.byteLength));
    await file.sync();
  } catch (err) {
    await file.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await file.close();
  await rename(tmp, path);
  return MAGIC.length + 4 + head.length + slices.reduce((n, s) => n + s.bytes, 0);
}

/** A snapshot read back, or why there is none to use. */
export type ReadSnapshot = { ok: true; header: KeySnapshotHeader; filter: GrowingKeyFilter } | { ok: false; why: string };

/** Reads the snapshot at `path`; a missing, truncated or foreign file is a reason, not an error. */
export async function readKeySnapshot(path: string): Promise<ReadSnapshot> {
  let file;
  try {
    file = await open(path, 'r');
  } catch (err) {
    return { ok: false, why: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no snapshot yet' : `unreadable: ${(err as Error).message}` };
  }
  try {
    return await readOpen(file);
  } finally {
    await file.close();
  }
}

async function readOpen(file: FileHandle): Promise<ReadSnapshot> {
  const { size } = await file.stat();
  const start = Buffer.alloc(MAGIC.length + 4);
  await file.read(start, 0, start.length, 0);
  if (size < start.length || !start.subarray(0, MAGIC.length).equals(MAGIC)) return { ok: false, why: 'not a key filter snapshot' };
  const head = Buffer.alloc(start.readUInt32LE(MAGIC.length));
  await file.read(head, 0, head.length, start.length);
  let header: KeySnapshotHeader;
  try {
    const json = JSON.parse(head.toString('utf8')) as { version?: unknown };
    // Bits of another layout answer wrongly, not just slowly: such a snapshot is read again from the segments.
    if (json.version !== KEY_SNAPSHOT_VERSION) return { ok: false, why: `its filter layout is version ${String(json.version)}, this code reads ${KEY_SNAPSHOT_VERSION}` };
    header = keySnapshotHeaderSchema.parse(json);
  } catch {
    return { ok: false, why: 'its header is damaged' };
  }
  let at = start.length + head.length;
  if (size !== at + header.slices.reduce((n, s) => n + s.bytes, 0)) return { ok: false, why: 'it is truncated' };
  const slices: KeyFilter[] = [];
  for (const s of header.slices) {
    // Read straight into the slice's own bit array: no second copy of hundreds of MB.
    const bits = new Uint32Array(s.bytes / 4);
    await file.read(new Uint8Array(bits.buffer), 0, s.bytes, at);
    at += s.bytes;
    try {
      slices.push(new KeyFilter(bits, s.added));
    } catch (err) {
      return { ok: false, why: (err as Error).message };
    }
  }
  return { ok: true, header, filter: new GrowingKeyFilter(0, header.sliceMaxBytes, slices) };
}
