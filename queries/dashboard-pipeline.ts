/**
 * Pipeline health, read from ClickHouse itself: how many rows each segment received per minute
 * (by ingested_at), how long packets took from created_at to ingested_at, how far the analyzer
 * and auditor are behind (analyzer_progress), and what was quarantined or found violated.
 * Ingest and quarantine panels filter on arrival time (ingested_at, received_at, detected_at),
 * not on created_at.
 */
import type { Violation } from '../analyzers/audit-rules.ts';
import { bucketOf, inWindow, PARAM_DOCS } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

const SERIES_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to, bucket_s: PARAM_DOCS.bucket_s };
const WINDOW_PARAMS = { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to };

/** The invariants the auditor records (SHOULD and cross-segment rules, SPEC §3). */
export const AUDITED_INVARIANTS = ['I4', 'I8', 'I9', 'I10', 'I11'] as const satisfies ReadonlyArray<Violation['invariant']>;

/** Quarantine reason codes grouped for the over-time panel. */
export const QUARANTINE_GROUPS = {
  transport: ['oversized', 'invalid_utf8', 'malformed_json', 'schema'],
  key_reuse: ['I1_call_id_reused', 'I1_output_id_reused', 'I1_dependency_reused'],
  rule: ['envelope_mismatch', 'I3_error_on_success', 'I5_args_hash', 'I6_dependency', 'I7_output_content'],
} as const;

/** Fills empty buckets of [from, to) with zero rows, so a quiet pipeline shows flat lines, not "no data". */
const ZERO_FILLED = `ORDER BY time WITH FILL
  FROM toDateTime(${bucketOf("{from:DateTime64(3, 'UTC')}")}, 'UTC')
  TO toDateTime({to:DateTime64(3, 'UTC')}, 'UTC')
  STEP toIntervalSecond({bucket_s:UInt32})`;

const list = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;

/** Rows per minute into each segment. */
export const INGEST_RATE: QuerySpec = {
  name: 'ingest_rate',
  description: 'Rows per minute written to each segment, by ingested_at (received_at for quarantine); workflows split into emitted and analyzer-linked.',
  sql: `SELECT ${bucketOf('at')} AS time, segment, count() * 60 / {bucket_s:UInt32} AS rows_per_min
FROM (
  SELECT ingested_at AS at, 'tool_invocations' AS segment FROM {db:Identifier}.tool_invocations WHERE ${inWindow('ingested_at')}
  UNION ALL
  SELECT ingested_at, 'tool_outputs' FROM {db:Identifier}.tool_outputs WHERE ${inWindow('ingested_at')}
  UNION ALL
  SELECT ingested_at, if(origin = 'analyzer', 'tool_workflows (analyzer)', 'tool_workflows (emitted)') FROM {db:Identifier}.tool_workflows WHERE ${inWindow('ingested_at')}
  UNION ALL
  SELECT received_at, 'quarantine' FROM {db:Identifier}.quarantine WHERE ${inWindow('received_at')}
)
GROUP BY time, segment
ORDER BY time, segment`,
  params: SERIES_PARAMS,
};

/** Ingest delay percentiles. */
export const INGEST_DELAY: QuerySpec = {
  name: 'ingest_delay',
  description: 'Delay from created_at to ingested_at of tool calls, seconds: p50, p95 and max per time bucket of ingested_at.',
  sql: `SELECT ${bucketOf('ingested_at')} AS time,
  quantile(0.5)(delay_ms) / 1000 AS p50_delay_s,
  quantile(0.95)(delay_ms) / 1000 AS p95_delay_s,
  max(delay_ms) / 1000 AS max_delay_s
FROM (
  SELECT ingested_at, greatest(0, dateDiff('millisecond', created_at, ingested_at)) AS delay_ms
  FROM {db:Identifier}.tool_invocations
  WHERE ${inWindow('ingested_at')}
)
GROUP BY time
ORDER BY time`,
  params: SERIES_PARAMS,
};

/** Totals of the pipeline over the window. */
export const PIPELINE_TOTALS: QuerySpec = {
  name: 'pipeline_totals',
  description: 'Rows ingested per segment, packets quarantined, violations recorded and the p95 ingest delay over the window (by arrival time).',
  sql: `SELECT
  (SELECT count() FROM {db:Identifier}.tool_invocations WHERE ${inWindow('ingested_at')}) AS invocations,
  (SELECT count() FROM {db:Identifier}.tool_outputs WHERE ${inWindow('ingested_at')}) AS outputs,
  (SELECT count() FROM {db:Identifier}.tool_workflows WHERE ${inWindow('ingested_at')}) AS dependencies,
  (SELECT count() FROM {db:Identifier}.quarantine WHERE ${inWindow('received_at')}) AS quarantined,
  (SELECT count() FROM {db:Identifier}.violations WHERE ${inWindow('detected_at')}) AS violations,
  (SELECT quantile(0.95)(greatest(0, dateDiff('millisecond', created_at, ingested_at))) / 1000
     FROM {db:Identifier}.tool_invocations WHERE ${inWindow('ingested_at')}) AS p95_ingest_delay_s`,
  params: WINDOW_PARAMS,
};

/** How far each analyzer job's recorded watermark trailed the wall clock. */
export const ANALYZER_LAG: QuerySpec = {
  name: 'analyzer_lag',
  description: 'Per analyzer job and time bucket: the largest gap between a recorded watermark (newest ingested_at it had processed) and when it was recorded, seconds.',
  sql: `SELECT ${bucketOf('updated_at')} AS time, toString(name) AS job,
  max(greatest(0, dateDiff('millisecond', watermark, updated_at))) / 1000 AS lag_s
FROM {db:Identifier}.analyzer_progress
WHERE ${inWindow('updated_at')}
GROUP BY time, job
ORDER BY time, job`,
  params: SERIES_PARAMS,
};

/** Each job's watermark now, and the ingested rows it has not processed yet. */
export const ANALYZER_BACKLOG: QuerySpec = {
  name: 'analyzer_backlog',
  description: "Per analyzer job: its watermark (processed_up_to), when it last advanced, and how far it is behind the newest ingested row (backlog_s, 0 when caught up). Not windowed: the state now.",
  sql: `WITH (SELECT greatest(
    (SELECT max(ingested_at) FROM {db:Identifier}.tool_invocations),
    (SELECT max(ingested_at) FROM {db:Identifier}.tool_outputs))) AS newest
SELECT toString(name) AS job,
  max(watermark) AS processed_up_to,
  max(updated_at) AS last_advanced,
  greatest(0, dateDiff('millisecond', processed_up_to, newest)) / 1000 AS backlog_s
FROM {db:Identifier}.analyzer_progress
GROUP BY job
ORDER BY job`,
  params: { db: PARAM_DOCS.db },
};

/** Quarantined packets over time, by kind of reason (zeros included). */
export const QUARANTINE_OVER_TIME: QuerySpec = {
  name: 'quarantine_over_time',
  description: 'Quarantined packets per time bucket of received_at, one column per kind of reason: transport (oversized, malformed, schema), key_reuse (I1), rule (other MUST rules), other.',
  sql: `SELECT ${bucketOf('received_at')} AS time,
  countIf(reason_code IN ${list(QUARANTINE_GROUPS.transport)}) AS transport,
  countIf(reason_code IN ${list(QUARANTINE_GROUPS.key_reuse)}) AS key_reuse,
  countIf(reason_code IN ${list(QUARANTINE_GROUPS.rule)}) AS rule,
  countIf(reason_code NOT IN ${list([...QUARANTINE_GROUPS.transport, ...QUARANTINE_GROUPS.key_reuse, ...QUARANTINE_GROUPS.rule])}) AS other
FROM {db:Identifier}.quarantine
WHERE ${inWindow('received_at')}
GROUP BY time
${ZERO_FILLED}`,
  params: SERIES_PARAMS,
};

/** Quarantined packets per reason code, every known code listed (0 when none). */
export const QUARANTINE_BY_REASON: QuerySpec = {
  name: 'quarantine_by_reason',
  description: 'Quarantined packets per reason code received in the window — every known code listed (0 when none), other codes as they occur — with packet types, the latest reason text and where it came from, most frequent first.',
  sql: `SELECT
  code AS reason_code,
  countIf(q.reason_code = code) AS packets,
  arrayStringConcat(arraySort(groupUniqArrayIf(q.packet_type, q.reason_code = code AND q.packet_type != '')), ', ') AS packet_types,
  if(packets = 0, NULL, maxIf(q.received_at, q.reason_code = code)) AS last_received,
  if(packets = 0, NULL, argMaxIf(q.reason, q.received_at, q.reason_code = code)) AS last_reason,
  if(packets = 0, NULL, argMaxIf(q.source_key, q.received_at, q.reason_code = code)) AS last_source
FROM (
  SELECT arrayJoin(arrayDistinct(arrayConcat(${list([...QUARANTINE_GROUPS.transport, ...QUARANTINE_GROUPS.key_reuse, ...QUARANTINE_GROUPS.rule])},
    (SELECT groupUniqArray(toString(reason_code)) FROM {db:Identifier}.quarantine WHERE ${inWindow('received_at')})))) AS code
) AS c
LEFT JOIN (
  SELECT toString(reason_code) AS reason_code, toString(packet_type) AS packet_type, received_at, reason, source_key
  FROM {db:Identifier}.quarantine
  WHERE ${inWindow('received_at')}
) AS q ON q.reason_code = c.code
GROUP BY code
ORDER BY packets DESC, code
LIMIT {limit:UInt32}`,
  params: { ...WINDOW_PARAMS, limit: PARAM_DOCS.limit },
};

/** Violations recorded over time, one column per audited invariant (zeros included). */
export const VIOLATIONS_OVER_TIME: QuerySpec = {
  name: 'violations_over_time',
  description: `Violations recorded per time bucket of detected_at, one column per audited invariant (${AUDITED_INVARIANTS.join(', ')}).`,
  sql: `SELECT ${bucketOf('detected_at')} AS time,
  ${AUDITED_INVARIANTS.map((i) => `countIf(invariant = '${i}') AS ${i}`).join(',\n  ')}
FROM {db:Identifier}.violations
WHERE ${inWindow('detected_at')}
GROUP BY time
${ZERO_FILLED}`,
  params: SERIES_PARAMS,
};

/** Violations per invariant, every audited invariant listed (0 when none). */
export const VIOLATIONS_BY_INVARIANT: QuerySpec = {
  name: 'violations_by_invariant',
  description: 'Violations per invariant recorded in the window, every audited invariant listed (0 when none), with the latest detail.',
  sql: `SELECT
  inv AS invariant,
  countIf(v.invariant = inv) AS violations,
  if(violations = 0, NULL, maxIf(v.detected_at, v.invariant = inv)) AS last_detected,
  if(violations = 0, NULL, argMaxIf(v.detail, v.detected_at, v.invariant = inv)) AS last_detail
FROM (SELECT arrayJoin(${list(AUDITED_INVARIANTS)}) AS inv) AS i
LEFT JOIN (
  SELECT toString(invariant) AS invariant, detected_at, detail
  FROM {db:Identifier}.violations
  WHERE ${inWindow('detected_at')}
) AS v ON v.invariant = i.inv
GROUP BY inv
ORDER BY violations DESC, inv`,
  params: WINDOW_PARAMS,
};
