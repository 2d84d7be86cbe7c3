/**
 * What a leaf of the audit log is, per kind of record: the row serialized field by field by
 * ClickHouse (each field as `<length>:<text>\n`, so no two rows serialize alike), its hash
 * SHA-256(0x00 ‖ data), its key, when it was stored and when it says it happened. The builder and
 * `tool-audit verify` compute leaves with the same SQL, so a stored row changed in any field
 * afterwards no longer hashes to its leaf. Pure: SQL text only.
 */

/** The kinds of records the log holds, in their order within one instant. */
export const LEAF_KINDS = ['tool_call', 'output', 'dependency', 'violation'] as const;
/** A kind of leaf. */
export type LeafKind = (typeof LEAF_KINDS)[number];

interface LeafSource {
  table: string;
  key: string;
  stored: string;
  created: string;
  /** Every stored column (an ALIAS such as args_hash is derived from them). */
  fields: readonly string[];
}

const SOURCES: Record<LeafKind, LeafSource> = {
  tool_call: {
    table: 'tool_invocations',
    key: 'toString(call_id)',
    stored: 'ingested_at',
    created: 'created_at',
    fields: ['call_id', 'task_id', 'tool_id', 'agent_id', 'orchestrator', 'instance_id', 'args', 'status', 'duration_ms', 'result_summary', 'error', 'cost_usd', 'tokens_used', 'created_at', 'fingerprint', 'source', 'approval', 'redactions', 'ingested_at'],
  },
  output: {
    table: 'tool_outputs',
    key: 'toString(output_id)',
    stored: 'ingested_at',
    created: 'created_at',
    fields: ['output_id', 'call_id', 'tool_id', 'content_type', 'content_hash', 'size_bytes', 'sample', 'created_at', 'fingerprint', 'source', 'redactions', 'task_id', 'ingested_at'],
  },
  dependency: {
    table: 'tool_workflows',
    key: "concat(task_id, '/', toString(preceding_call_id), '>', toString(succeeding_call_id), '/', toString(origin))",
    stored: 'ingested_at',
    created: 'ingested_at',
    fields: ['task_id', 'preceding_call_id', 'succeeding_call_id', 'preceding_tool_id', 'succeeding_tool_id', 'time_delta_ms', 'data_flow', 'origin', 'fingerprint', 'source', 'ingested_at'],
  },
  violation: {
    table: 'violations',
    key: 'violation_key',
    stored: 'detected_at',
    created: 'detected_at',
    fields: ['violation_key', 'invariant', 'packet_type', 'ids', 'detail', 'detected_at'],
  },
};

/** The table a kind's rows are stored in. */
export function leafTable(kind: LeafKind): string {
  return SOURCES[kind].table;
}

/** `<length>:<text>\n` of a column; NULL is `-\n`, which no length-prefixed text can be. */
const field = (c: string) => `if(isNull(${c}), '-\\n', concat(toString(length(toString(assumeNotNull(${c})))), ':', toString(assumeNotNull(${c})), '\\n'))`;

/** The leaf data of a kind's row: a header line, then every field. */
export function leafData(kind: LeafKind): string {
  return `concat('tool-audit leaf v1 ${kind}\\n', ${SOURCES[kind].fields.map(field).join(', ')})`;
}

/** SHA-256(0x00 ‖ leaf data) of a kind's row, 32 bytes. */
export function leafHash(kind: LeafKind): string {
  return `SHA256(concat(char(0), ${leafData(kind)}))`;
}

/** The rank of a kind among records stored in the same millisecond (the log's order within one instant). */
export const KIND_RANK: Record<LeafKind, number> = { tool_call: 1, output: 2, dependency: 3, violation: 4 };

/**
 * SELECT of a kind's leaves: kind, its rank, key, leaf hash (FixedString(32)), stored_at and
 * created_at, and the row's part (where verify says a record is); `where` filters the table and
 * may use {from:DateTime64(3)} and {to:DateTime64(3)}.
 */
export function leafSelect(kind: LeafKind, where: string, withData = false): string {
  const s = SOURCES[kind];
  return `SELECT '${kind}' AS kind, ${KIND_RANK[kind]} AS kind_rank, ${s.key} AS record_key, ${leafHash(kind)} AS leaf_hash,
    ${s.stored} AS stored_at, ${s.created} AS created_at, _part AS part${withData ? `, ${leafData(kind)} AS data` : ''}
  FROM {db:Identifier}.${s.table} WHERE ${where}`;
}

/** A kind's column of storage time (ingested_at, or detected_at of a violation). */
export function storedColumn(kind: LeafKind): string {
  return SOURCES[kind].stored;
}

/**
 * A WHERE of a kind's row by its key ({key:String}), as its table's indexes can use it. A call or
 * an output is found with its created_at from the keys table ordered by its id (call_keys,
 * output_keys: a primary-key read), which prunes the table to the parts and granules of that
 * instant: the bloom filter on the id alone reads ~2 bytes of index per stored row (10 M calls:
 * ~40 ms against ~10 ms). A row whose created_at was changed afterwards is not found this way
 * ({@link keysFilter} finds it).
 */
export function keyFilter(kind: LeafKind): string {
  if (kind === 'tool_call') return 'call_id = toUUIDOrZero({key:String}) AND created_at IN (SELECT created_at FROM {db:Identifier}.call_keys WHERE call_id = toUUIDOrZero({key:String}))';
  if (kind === 'output') return 'output_id = toUUIDOrZero({key:String}) AND created_at IN (SELECT created_at FROM {db:Identifier}.output_keys WHERE output_id = toUUIDOrZero({key:String}))';
  return `${SOURCES[kind].key} = {key:String}`;
}

/** A kind's key expression (what audit_log_leaves.record_key holds). */
export function keyColumn(kind: LeafKind): string {
  return SOURCES[kind].key;
}

/** A WHERE of a kind's rows whose key is one of {keys:Array(String)}. */
export function keysFilter(kind: LeafKind): string {
  if (kind === 'tool_call') return 'call_id IN arrayMap(k -> toUUIDOrZero(k), {keys:Array(String)})';
  if (kind === 'output') return 'output_id IN arrayMap(k -> toUUIDOrZero(k), {keys:Array(String)})';
  return `${SOURCES[kind].key} IN {keys:Array(String)}`;
}
