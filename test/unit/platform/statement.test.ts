import { describe, expect, it } from 'vitest';
import { chTime, settingsClause } from '../../../platform/clickhouse/statement.ts';

describe('statements', () => {
  it('puts the limits (and a query’s own settings) in a SETTINGS clause', () => {
    const s = settingsClause({ maxExecutionSeconds: 7, maxResultRows: 1234 }, { use_skip_indexes: 0, preferred_optimize_projection_name: 'by_call' });
    expect(s).toContain('SETTINGS use_skip_indexes = 0, preferred_optimize_projection_name = \'by_call\'');
    expect(s).toContain('max_execution_time = 7');
    expect(s).toContain("max_result_rows = 1234, result_overflow_mode = 'throw'");
    expect(() => settingsClause({ maxExecutionSeconds: 1, maxResultRows: 1 }, { 'x; DROP': 1 })).toThrow();
    expect(() => settingsClause({ maxExecutionSeconds: 1, maxResultRows: 1 }, { a: "x'" })).toThrow();
  });

  it('writes epoch milliseconds as ClickHouse DateTime64(3) text in UTC', () => {
    expect(chTime(Date.UTC(2026, 10, 23, 7, 5, 9, 42))).toBe('2026-11-23 07:05:09.042');
    expect(chTime(0)).toBe('1970-01-01 00:00:00.000');
  });
});
