/**
 * The checkpoint ledger: where the audit log's builder keeps what it signed, outside ClickHouse
 * (AUDIT_LOG_DIR), so that someone who can rewrite the database cannot rewrite what was
 * witnessed. Two files:
 *  - `checkpoint`: the newest signed checkpoint (a C2SP signed note), replaced atomically — what
 *    the builder checks the next tree against, and what a monitor or witness fetches;
 *  - `checkpoints.jsonl`: every checkpoint, operator reset and key rotation, one JSON object a
 *    line, appended and never rewritten — what `tool-audit verify` proves the tree against.
 * A line cut short by a crash is skipped when read (its checkpoint is still the newest one in
 * `checkpoint`, written after the line).
 */
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** One line of the ledger. */
export type LedgerEntry =
  | { type: 'checkpoint'; at_ms: number; note: string; cosignatures?: string[] }
  | { type: 'reset'; at_ms: number; reason: string; note: string }
  | { type: 'rotation'; at_ms: number; old_key: string; new_key: string };

/** The ledger's files in a folder. */
export interface CheckpointLedger {
  /** The folder. */
  readonly dir: string;
  /** The newest checkpoint note, or undefined before the first. */
  latest(): Promise<string | undefined>;
  /** Appends a checkpoint and makes it the newest. */
  addCheckpoint(note: string, atMs: number, cosignatures?: string[]): Promise<void>;
  /** Appends an entry that is not a checkpoint (reset, rotation). */
  append(entry: LedgerEntry): Promise<void>;
  /** Every entry, oldest first; lines that are not entries are counted in `bad`. */
  entries(onEntry: (e: LedgerEntry, line: number) => void): Promise<{ lines: number; bad: number }>;
}

/** The ledger kept in `dir` (made on first write). */
export function fileLedger(dir: string, file = 'checkpoints.jsonl'): CheckpointLedger {
  const all = join(dir, file);
  const newest = join(dir, 'checkpoint');
  const append = async (entry: LedgerEntry) => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await appendFile(all, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  };
  return {
    dir,
    async latest() {
      try {
        return await readFile(newest, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    async addCheckpoint(note, atMs, cosignatures) {
      // The line first: a crash between the two leaves the newest checkpoint logged, never a
      // `checkpoint` file the ledger does not hold.
      await append({ type: 'checkpoint', at_ms: atMs, note, ...(cosignatures?.length ? { cosignatures } : {}) });
      const tmp = `${newest}.${process.pid}.tmp`;
      await writeFile(tmp, note, { mode: 0o644 });
      await rename(tmp, newest);
    },
    append,
    entries: (onEntry) => readEntries(all, onEntry),
  };
}

/** Reads a ledger file line by line (it grows with every head: never read whole). */
export async function readEntries(path: string, onEntry: (e: LedgerEntry, line: number) => void): Promise<{ lines: number; bad: number }> {
  let lines = 0;
  let bad = 0;
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { lines, bad };
    throw err;
  }
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    lines++;
    if (!line.trim()) continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      bad++;
      continue;
    }
    if (isEntry(e)) onEntry(e, lines);
    else bad++;
  }
  return { lines, bad };
}

const isEntry = (e: unknown): e is LedgerEntry => {
  if (typeof e !== 'object' || e === null) return false;
  const o = e as Record<string, unknown>;
  if (typeof o.at_ms !== 'number') return false;
  if (o.type === 'checkpoint') return typeof o.note === 'string';
  if (o.type === 'reset') return typeof o.note === 'string' && typeof o.reason === 'string';
  if (o.type === 'rotation') return typeof o.old_key === 'string' && typeof o.new_key === 'string';
  return false;
};
