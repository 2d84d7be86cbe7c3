/**
 * Export (GET /v1/export, `tool-audit export`): every stored call, output, dependency or violation
 * of a time range (and of one task), in table order, as NDJSON, CSV or Parquet written by ClickHouse
 * itself: the statements and what their rows hold, and {@link exportRows}, which hands one to the
 * door to stream (platform/clickhouse/door.ts `exportRows`), so memory stays bounded whatever the range.
 */
import { z } from 'zod';
import { ERROR_CATEGORY_SQL } from './rows.ts';
import { chTime, type TimeWindow } from './sql.ts';
import { VIOLATION_FILTERS } from './violations.ts';

/** What can be exported. */
export const EXPORT_KINDS = ['calls', 'outputs', 'dependencies', 'violations'] as const;
/** A kind of export. */
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** The formats, and ClickHouse's name of each. */
export const EXPORT_FORMATS = { ndjson: 'JSONEachRow', csv: 'CSVWithNames', parquet: 'Parquet' } as const;
/** A format of export. */
export type ExportFormat = keyof typeof EXPORT_FORMATS;

/** What an export answers with, per format. */
export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
};

/** The parameters of an export, as the route and the CLI take them. */
export const exportParamsSchema = z.strictObject({
  kind: z.enum(EXPORT_KINDS).default('calls'),
  format: z.enum(Object.keys(EXPORT_FORMATS) as [ExportFormat, ...ExportFormat[]]).default('ndjson'),
});

const TIME = (column: string) => `${column} >= {from:DateTime64(3, 'UTC')} AND ${column} < {to:DateTime64(3, 'UTC')}`;
const TASK = "({task_id:String} = '' OR task_id = {task_id:String})";

/**
 * Each kind's statement. Ids as text (UUIDs read as strings everywhere), enums as their names, an
 * empty task or approval as null, times as UTC timestamps (ISO 8601 in NDJSON and CSV). A call's
 * args are its stored canonical JSON text, byte for byte: SHA-256 of their UTF-8 is args_hash.
 * Rows come in their table's own order (calls by task, then time; outputs by tool and content;
 * dependencies by task; violations by rule, then time), which ClickHouse reads in order without
 * sorting: ordered by time, a 10 M-call export held 4.4 GB to sort, in table order 0.5 GB. The
 * order is named by table column, as the same names are aliases of the columns as exported.
 */
const STATEMENTS: Record<ExportKind, string> = {
  calls: `SELECT toString(call_id) AS call_id, nullIf(task_id, '') AS task_id, toString(tool_id) AS tool_id, toString(agent_id) AS agent_id,
    toString(orchestrator) AS orchestrator, toString(instance_id) AS instance_id, args, toString(args_hash) AS args_hash, toString(status) AS status,
    duration_ms, result_summary, error, nullIf(${ERROR_CATEGORY_SQL}, '') AS error_category, cost_usd, tokens_used, created_at,
    nullIf(approval, '') AS approval, redactions, ingested_at, source
  FROM {db:Identifier}.tool_invocations
  WHERE ${TIME('created_at')} AND ${TASK}
  ORDER BY tool_invocations.task_id, tool_invocations.created_at, tool_invocations.call_id`,
  outputs: `SELECT toString(output_id) AS output_id, toString(call_id) AS call_id, nullIf(assumeNotNull(task_id), '') AS task_id, toString(tool_id) AS tool_id,
    toString(content_type) AS content_type, toString(content_hash) AS content_hash, size_bytes, sample, created_at, redactions, ingested_at, source
  FROM {db:Identifier}.tool_outputs
  WHERE ${TIME('created_at')} AND ${TASK}
  ORDER BY tool_outputs.tool_id, tool_outputs.content_hash, tool_outputs.created_at, tool_outputs.output_id`,
  dependencies: `SELECT task_id, toString(preceding_call_id) AS preceding_call_id, toString(succeeding_call_id) AS succeeding_call_id,
    toString(preceding_tool_id) AS preceding_tool_id, toString(succeeding_tool_id) AS succeeding_tool_id, time_delta_ms, data_flow,
    toString(origin) AS origin, ingested_at, source
  FROM {db:Identifier}.tool_workflows
  WHERE ${TIME('ingested_at')} AND ${TASK}
  ORDER BY tool_workflows.task_id, tool_workflows.preceding_call_id, tool_workflows.succeeding_call_id`,
  violations: `SELECT violation_key, toString(invariant) AS invariant, toString(packet_type) AS packet_type, ids, detail, detected_at
  FROM {db:Identifier}.violations
  WHERE ${VIOLATION_FILTERS}
  ORDER BY violations.invariant, violations.detected_at, violations.violation_key`,
};

/**
 * Settings of every export statement: a sort that read-in-order did not spare spills to disk past
 * 256 MiB instead of growing with the range; Parquet row groups of 100,000 rows or 64 MiB (the
 * writer holds one); ISO timestamps in text formats; and Parquet strings as strings (UTF-8 logical
 * type: pandas and DuckDB read text, not bytes).
 */
export const EXPORT_SETTINGS = {
  max_bytes_before_external_sort: String(256 * 1024 * 1024),
  output_format_parquet_row_group_size: 100_000,
  output_format_parquet_row_group_size_bytes: String(64 * 1024 * 1024),
  date_time_output_format: 'iso',
  output_format_parquet_string_as_string: 1,
  output_format_json_quote_64bit_integers: 0,
} as const;

/** What an export needs of the door (platform/clickhouse/door.ts): query SQL takes no client. */
export interface ExportRunner {
  exportRows(query: string, params: Record<string, unknown>, format: (typeof EXPORT_FORMATS)[ExportFormat], settings: Record<string, string | number>): AsyncIterable<Buffer>;
}

/**
 * The rows of an export of `kind` over a window (and one task) in `format`, as the door streams
 * them (GET /v1/export and `tool-audit export` alike).
 */
export function exportRows(door: ExportRunner, p: { kind: ExportKind; format: ExportFormat; task?: string | undefined }, window: TimeWindow): AsyncIterable<Buffer> {
  // The violations' filter also takes an invariant, a call and a tool: none here.
  const params = { from: chTime(window.fromMs), to: chTime(window.toMs), task_id: p.task ?? '', invariant: '', call_id: '', tool_id: '' };
  return door.exportRows(STATEMENTS[p.kind], params, EXPORT_FORMATS[p.format], EXPORT_SETTINGS);
}
