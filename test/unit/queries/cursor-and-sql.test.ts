import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { workflowDag } from '../../../queries/by-task.ts';
import { cursorCodec, msKey, uuidKey } from '../../../queries/cursor.ts';
import { countsObject, InvalidParamError, pageOf, settingsClause } from '../../../queries/sql.ts';

const codec = cursorCodec('list_a', z.tuple([msKey, uuidKey]));
const UUID = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('cursors', () => {
  it('round-trips the sort key as an opaque base64url token', () => {
    const c = codec.encode([1_763_000_000_123, UUID]);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode(c)).toEqual([1_763_000_000_123, UUID]);
  });

  it('refuses cursors of another list, tampered, malformed or oversized', () => {
    const other = cursorCodec('list_b', z.tuple([msKey, uuidKey])).encode([1, UUID]);
    const tampered = Buffer.from(JSON.stringify(['list_a', [1, "x' OR 1=1"]])).toString('base64url');
    const negative = Buffer.from(JSON.stringify(['list_a', [-5, UUID]])).toString('base64url');
    for (const bad of [other, tampered, negative, '%%%', 'bm90IGpzb24', 'A'.repeat(5000), '']) {
      expect(() => codec.decode(bad), bad.slice(0, 20)).toThrow(InvalidParamError);
    }
  });
});

describe('sql helpers', () => {
  it('puts the limits (and a query’s own settings) in a SETTINGS clause', () => {
    const s = settingsClause({ maxExecutionSeconds: 7, maxResultRows: 1234 }, { use_skip_indexes: 0, preferred_optimize_projection_name: 'by_call' });
    expect(s).toContain('SETTINGS use_skip_indexes = 0, preferred_optimize_projection_name = \'by_call\'');
    expect(s).toContain('max_execution_time = 7');
    expect(s).toContain("max_result_rows = 1234, result_overflow_mode = 'throw'");
    expect(() => settingsClause({ maxExecutionSeconds: 1, maxResultRows: 1 }, { 'x; DROP': 1 })).toThrow();
    expect(() => settingsClause({ maxExecutionSeconds: 1, maxResultRows: 1 }, { a: "x'" })).toThrow();
  });

  it('pages with one row of look-ahead', () => {
    expect(pageOf([1, 2, 3], 2)).toEqual({ rows: [1, 2], more: true });
    expect(pageOf([1, 2], 2)).toEqual({ rows: [1, 2], more: false });
  });

  it('keeps data keys such as __proto__ as ordinary keys', () => {
    const o = countsObject([{ k: '__proto__', n: 2 }, { k: 'constructor', n: '3' }]);
    expect(Object.keys(o)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(o))).toEqual(JSON.parse('{"__proto__": 2, "constructor": 3}'));
  });

  it('builds the DAG from the calls and the dependencies between two of them', () => {
    const inv = (id: string) => ({ call_id: id, tool_id: 't', status: 'success' as const, created_at: 'x', duration_ms: 1, cost_usd: null }) as never;
    const dep = (a: string, b: string) => ({ task_id: 'k', preceding_call_id: a, succeeding_call_id: b, preceding_tool_id: 't', succeeding_tool_id: 't', time_delta_ms: 5, data_flow: null, origin: 'emitted' as const });
    const dag = workflowDag([inv('a'), inv('b'), inv('c')], [dep('a', 'b'), dep('b', 'z'), dep('a', 'c')]);
    expect(dag.nodes.map((n) => n.id)).toEqual(['a', 'b', 'c']);
    expect(dag.edges.map((e) => `${e.from}>${e.to}`)).toEqual(['a>b', 'a>c']);
  });
});
