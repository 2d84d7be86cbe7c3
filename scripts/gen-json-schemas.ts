/**
 * Writes schemas/json/*.schema.json from the zod contracts (npm run schemas).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { jsonSchemaFiles } from '../schemas/json-schema.ts';

const dir = new URL('../schemas/json/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [file, text] of Object.entries(jsonSchemaFiles())) writeFileSync(new URL(file, dir), text);
process.stdout.write(`wrote ${Object.keys(jsonSchemaFiles()).length} JSON Schema files to schemas/json/\n`);
