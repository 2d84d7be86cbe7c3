/**
 * A secret a process keeps in its state folder when the configuration gives none (the redaction
 * key, the audit log's signing key): read it, or make it on first start. `wx`: two processes
 * starting at once on one folder end with one file, and both read it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** The file's text, or `make()`'s, written with mode 0600 when there was no file. */
export async function readOrCreate(path: string, make: () => string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const text = make();
  await mkdir(dirname(path), { recursive: true });
  try {
    await writeFile(path, text, { mode: 0o600, flag: 'wx' });
    return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFile(path, 'utf8');
    throw err;
  }
}
