import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jsonSchemaFiles } from '../../../schemas/json-schema.ts';

describe('checked-in JSON Schemas', () => {
  it('JSON Schema files are up to date (run npm run schemas)', () => {
    for (const [file, text] of Object.entries(jsonSchemaFiles())) {
      expect(readFileSync(new URL(`../../../schemas/json/${file}`, import.meta.url), 'utf8'), file).toBe(text);
    }
  });
});
