/**
 * Large answers out of ClickHouse without holding them (exports): a server's answer is a stream
 * already; embedded ClickHouse (chDB) hands over every answer whole, in memory, so there the rows
 * are written by ClickHouse itself into a file (`INSERT INTO FUNCTION file(…)`, which writes block
 * by block: NDJSON, CSV and Parquet alike go to disk as they are made, and a file is never
 * rewritten behind its end), and that file is read as it grows, then removed.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.ts';

/** ClickHouse output formats an export may ask for. */
export type ExportFormatName = 'JSONEachRow' | 'CSVWithNames' | 'Parquet';

const READ_BYTES = 1 << 20;
const POLL_MS = 20;

/**
 * Runs `write(path)` — a statement that makes the file `path` — and yields the file's bytes as
 * they are written, at most 1 MiB at a time; the file is removed once the statement is over
 * (also when the reader stops early: the statement cannot be stopped on the embedded engine, so
 * the file goes when it ends). A statement that fails ends the iteration with its error.
 */
export async function* tailWrittenFile(dir: string, extension: string, write: (path: string) => Promise<void>): AsyncGenerator<Buffer> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `export-${randomUUID()}.${extension}`);
  let done = false;
  let failure: unknown;
  const running = write(path).then(
    () => void (done = true),
    (err: unknown) => void ((failure = err), (done = true)),
  );
  let fd: FileHandle | undefined;
  try {
    const buf = Buffer.alloc(READ_BYTES);
    let pos = 0;
    for (;;) {
      // Whether the statement was over is read before the file: what it wrote by then is there.
      const over = done;
      if (!fd) fd = await open(path, 'r').catch(() => undefined);
      if (fd) {
        const { bytesRead } = await fd.read(buf, 0, READ_BYTES, pos);
        if (bytesRead > 0) {
          pos += bytesRead;
          yield Buffer.from(buf.subarray(0, bytesRead));
          continue;
        }
      }
      if (over) break;
      await sleep(POLL_MS);
    }
    if (failure !== undefined) throw failure;
    // A statement that ended well always leaves its file (empty answers too): none is a fault.
    if (!fd) throw new AppError('CLICKHOUSE_QUERY_FAILED', `the export wrote no file at ${path}`, { retryable: false });
  } finally {
    await fd?.close();
    await running;
    await unlink(path).catch(() => undefined);
  }
}
