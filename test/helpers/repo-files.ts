/**
 * The repository's files under a folder, for tests that read the source itself (the layout, the
 * benches' paths): build output, dependencies and generated JSON left out.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const SKIPPED = new Set(['node_modules', 'dist', 'json']);

/** Every file under `dir` (recursively) whose name matches `name`; type declarations (.d.ts) never. */
export function filesUnder(dir: string, name: RegExp): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const p = join(dir, entry);
    if (SKIPPED.has(entry)) return [];
    return statSync(p).isDirectory() ? filesUnder(p, name) : name.test(entry) && !entry.endsWith('.d.ts') ? [p] : [];
  });
}
