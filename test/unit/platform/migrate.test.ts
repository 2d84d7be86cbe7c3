import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { splitStatements } from '../../../platform/clickhouse/migrate.ts';

describe('migration files', () => {
  it('split into statements', () => {
    const sql = readFileSync(new URL('../../../platform/clickhouse/migrations/001_segments.sql', import.meta.url), 'utf8');
    const st = splitStatements(sql);
    expect(st.filter((s) => s.startsWith('CREATE TABLE'))).toHaveLength(6);
  });
});
