import { describe, expect, it } from 'vitest';
import { expandMacros, expandPanelSql, expandVariables, grafanaInterval } from '../../../dashboards/grafana-expand.ts';
import { panelSql, placeholders, referencedVariables } from '../../../dashboards/panel-sql.ts';

const ctx = { database: 'tool_audit' };
const spec = (sql: string) => ({ name: 't', sql });

describe('panelSql: QuerySpec placeholders → Grafana', () => {
  it('binds the window, the bucket, the database and the limit', () => {
    const sql = panelSql(
      spec("SELECT toStartOfInterval(created_at, toIntervalSecond({bucket_s:UInt32})) AS time FROM {db:Identifier}.t WHERE created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')} LIMIT {limit:UInt32}"),
      ctx,
      { limit: 25 },
    );
    expect(sql).toBe('SELECT toStartOfInterval(created_at, toIntervalSecond($__interval_s)) AS time FROM tool_audit.t WHERE created_at >= $__fromTime_ms AND created_at < $__toTime_ms LIMIT 25');
  });

  it('quotes string variables through Grafana and types numeric ones like the API does', () => {
    expect(panelSql(spec('WHERE tool_id = {tool_id:String} AND agent_id = {agent_id:String}'), ctx)).toBe('WHERE tool_id = ${tool_id:sqlstring} AND agent_id = ${agent_id:sqlstring}');
    expect(panelSql(spec('cost_usd > {threshold_usd:Float64} AND n >= {min_count:UInt32}'), ctx)).toBe('cost_usd > toFloat64(${threshold_usd:sqlstring}) AND n >= toUInt32(${min_count:sqlstring})');
  });

  it('asks for the first page of paginated queries', () => {
    expect(panelSql(spec("(NOT {has_cursor:Bool} OR (created_at, call_id) < ({c_at:DateTime64(3, 'UTC')}, {c_id:UUID}))"), ctx)).toBe(
      "(NOT false OR (created_at, call_id) < (toDateTime64(0, 3, 'UTC'), toUUID('00000000-0000-0000-0000-000000000000')))",
    );
  });

  it('falls back to the latest task when the task variable is empty, looking only at the range\'s newest calls', () => {
    const sql = panelSql(spec('WHERE task_id = {task_id:String}'), ctx);
    expect(sql).toContain("if(${task_id:sqlstring} != '', ${task_id:sqlstring}, ifNull((SELECT task_id FROM (SELECT task_id, created_at FROM tool_audit.tool_invocations");
    // Never every stored dependency's task: that set cost ~0.5 s a panel at 10 M calls, chosen task or not.
    expect(sql).not.toMatch(/IN \(SELECT task_id FROM tool_audit\.tool_workflows\)/);
    expect(sql.match(/ORDER BY created_at DESC LIMIT 1000/g)).toHaveLength(2);
    expect(referencedVariables(sql)).toEqual(['task_id']);
  });

  it('refuses a placeholder it has no binding for, and a database that is not an identifier', () => {
    expect(() => panelSql(spec('WHERE x = {mystery:String}'), ctx)).toThrow(/no Grafana binding for \{mystery:String\}/);
    expect(() => panelSql(spec('SELECT 1'), { database: 'x; DROP TABLE y' })).toThrow(/identifier/);
    expect(panelSql(spec('WHERE x = {mystery:String}'), ctx, { overrides: { mystery: "'ok'" } })).toBe("WHERE x = 'ok'");
  });

  it('lists placeholders with their types', () => {
    expect(placeholders("a {from:DateTime64(3, 'UTC')} b {db:Identifier}")).toEqual([
      { name: 'from', type: "DateTime64(3, 'UTC')" },
      { name: 'db', type: 'Identifier' },
    ]);
  });
});

describe('Grafana + grafana-clickhouse-datasource expansion (emulated)', () => {
  const range = { fromMs: 1_700_000_000_123, toMs: 1_700_003_600_456 };

  it('formats variables as Grafana does', () => {
    expect(expandVariables("x = ${v:sqlstring} AND y = '$w' AND z IN (${m:sqlstring}) AND r = ${v}", { v: "it's", w: 'plain', m: ['a', 'b'] })).toBe(
      "x = 'it''s' AND y = 'plain' AND z IN ('a','b') AND r = it's",
    );
    expect(expandVariables('t >= $__fromTime_ms AND $unknown', {})).toBe('t >= $__fromTime_ms AND $unknown');
  });

  it('expands the datasource macros like pkg/macros/macros.go', () => {
    expect(expandMacros('$__fromTime $__toTime $__fromTime_ms $__toTime_ms', { ...range, intervalMs: 60_000 })).toBe(
      'toDateTime(1700000000) toDateTime(1700003600) fromUnixTimestamp64Milli(1700000000123) fromUnixTimestamp64Milli(1700003600456)',
    );
    expect(expandMacros('WHERE $__timeFilter(ts) AND $__timeFilter_ms(ts)', { ...range, intervalMs: 60_000 })).toBe(
      'WHERE ts >= toDateTime(1700000000) AND ts <= toDateTime(1700003600) AND ts >= fromUnixTimestamp64Milli(1700000000123) AND ts <= fromUnixTimestamp64Milli(1700003600456)',
    );
    expect(expandMacros('$__timeInterval(ts), $__interval_s', { ...range, intervalMs: 30_000 })).toBe('toStartOfInterval(toDateTime(ts), INTERVAL 30 second), 30');
    expect(expandMacros('$__interval_s', { ...range, intervalMs: 200 })).toBe('1');
    expect(expandMacros('$__timeFilter(toDateTime(a, b))', { ...range, intervalMs: 1000 })).toContain('toDateTime(a, b) >= toDateTime(1700000000)');
    expect(() => expandMacros('$__nope', range)).toThrow(/not one/);
  });

  it('picks a nice auto interval', () => {
    expect(grafanaInterval(0, 3_600_000)).toBe(5000);
    expect(grafanaInterval(0, 6 * 3_600_000)).toBe(30_000);
    expect(grafanaInterval(0, 1000)).toBe(1);
  });

  it('composes both steps', () => {
    expect(expandPanelSql('tool_id = ${tool_id:sqlstring} AND t < $__toTime_ms', { ...range, variables: { tool_id: '' } })).toBe("tool_id = '' AND t < fromUnixTimestamp64Milli(1700003600456)");
  });
});
