/**
 * The benches find their children, workers and the repository by paths the typecheck does not
 * see (`new URL('./x.mjs', import.meta.url)`, `join(root, 'bench/…')`, package.json's scripts):
 * each must name a file that exists, so a bench moved or renamed cannot be left pointing nowhere.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from '../../helpers/repo-files.ts';

const root = new URL('../../../', import.meta.url).pathname;

describe('bench paths', () => {
  it('every path a bench or a bench script names exists', () => {
    const missing: string[] = [];
    for (const file of filesUnder(join(root, 'bench'), /\.(ts|mjs|sh)$/)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/new URL\(\s*'(\.{1,2}\/[^']*)',\s*import\.meta\.url\)/g)) {
        const target = resolve(dirname(file), m[1] as string);
        if (!existsSync(target)) missing.push(`${relative(root, file)}: ${m[1]}`);
      }
      for (const m of text.matchAll(/'(bench\/[\w./-]+\.(?:ts|mjs|sh))'/g)) {
        if (!existsSync(join(root, m[1] as string))) missing.push(`${relative(root, file)}: ${m[1]}`);
      }
    }
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const [name, line] of Object.entries(scripts)) {
      for (const m of line.matchAll(/\b(bench\/[\w./-]+\.(?:ts|mjs|sh))\b/g)) if (!existsSync(join(root, m[1] as string))) missing.push(`package.json ${name}: ${m[1]}`);
    }
    expect(missing).toEqual([]);
  });
});
