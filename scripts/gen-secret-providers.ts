/**
 * Writes the files generated from the provider table (npm run gen:secret-providers): the Python
 * emitter's copy of it and docs/secret-providers.md.
 */
import { writeFileSync } from 'node:fs';
import { secretProviderFiles } from '../schemas/secret-provider-files.ts';

const root = new URL('../', import.meta.url);
for (const [path, text] of Object.entries(secretProviderFiles())) writeFileSync(new URL(path, root), text);
process.stdout.write(`wrote ${Object.keys(secretProviderFiles()).join(', ')}\n`);
