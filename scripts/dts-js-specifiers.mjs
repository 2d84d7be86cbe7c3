// Rewrites the relative `.ts` import specifiers tsc leaves in declaration files to `.js`
// (rewriteRelativeImportExtensions only rewrites the JavaScript). TypeScript ≥ 5 reads either,
// but `.js` is what every TypeScript that understands `exports` expects next to a .js file.
// Usage: node scripts/dts-js-specifiers.mjs <dist directory>
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RELATIVE_TS = /(\bfrom\s+|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g;

const dir = process.argv[2];
if (!dir) throw new Error('usage: dts-js-specifiers.mjs <dist directory>');
let files = 0;
for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const path = join(entry.parentPath, entry.name);
  const text = readFileSync(path, 'utf8');
  const out = text.replace(RELATIVE_TS, '$1$2$3.js$2');
  if (out !== text) {
    writeFileSync(path, out);
    files++;
  }
}
console.log(`${files} declaration files: relative .ts specifiers now .js`);
