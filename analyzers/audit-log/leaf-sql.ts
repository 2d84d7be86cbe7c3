/**
 * What a leaf of the audit log is, per kind of record: the row serialized field by field by
 * ClickHouse (each field as `<length>:<text>\n`, so no two rows serialize alike), its hash
 * SHA-256(0x00 ‖ data), its key, when it was stored and when it says it happened. The builder and
 * `tool-audit verify` compute leaves with the same SQL, so a stored row changed in any field
 * afterwards no longer hashes to its leaf. Pure: SQL text only.
 */

/**
 * The kinds of records the log holds, in their order within one instant: the records of calls,
 * and what their audit depends on — the manifest versions and MCP tool definitions they are judged
 * against, the packets refused into quarantine, the budget decisions taken before calls — and the
 * model turns that asked for calls (the task view serves them beside the calls, and budgets count
 * their cost) and the agent runs that name tasks.
 */
export const LEAF_KINDS = ['tool_call', 'output', 'dependency', 'violation', 'manifest', 'mcp_definition', 'quarantine', 'budget_decision', 'model_turn', 'agent_run'] as const;
/** A kind of leaf. */
export type LeafKind = (typeof LEAF_KINDS)[number];
/** Kinds the log took in after it began: their rows stored before are appended once (builder.ts). */
export const LATE_KINDS: readonly LeafKind[] = ['manifest', 'mcp_definition', 'quarantine', 'budget_decision', 'model_turn', 'agent_run'];

interface LeafSource {
  table: string;
  key: string;
  stored: string;
  created: string;
  /** Every stored column (an ALIAS such as args_hash is derived from them). */
  fields: readonly string[];
  /**
   * A column added after rows of the kind were logged: written after the fields only when not
   * NULL, so the leaves of the rows without it stay what they were (one such column a kind).
   */
  optional?: string;
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
  manifest: {
    table: 'tool_manifests',
    key: "concat(toString(version), '/', tool_id)",
    stored: 'applied_at',
    created: 'effective_at',
    fields: ['version', 'effective_at', 'tools', 'tool_id', 'entry', 'idempotent', 'cache_ttl_ms', 'warnings', 'applied_at', 'applied_by'],
  },
  mcp_definition: {
    table: 'mcp_tool_definitions',
    key: "concat(tool_id, '/', toString(version), '/', toString(change), '/', definition_hash)",
    stored: 'recorded_at',
    created: 'seen_at',
    fields: ['server', 'tool_id', 'tool', 'definition_hash', 'definition', 'change', 'version', 'seen_at', 'recorded_at'],
  },
  quarantine: {
    table: 'quarantine',
    key: 'source_key',
    stored: 'received_at',
    created: 'received_at',
    fields: ['source_key', 'source_kind', 'topic', 'partition', 'offset', 'request_id', 'packet_type', 'reason_code', 'reason', 'ids', 'raw', 'raw_encoding', 'received_at'],
  },
  budget_decision: {
    table: 'budget_decisions',
    key: 'toString(decision_id)',
    stored: 'recorded_at',
    created: 'decided_at',
    fields: ['decision_id', 'decided_at', 'agent_id', 'tool_id', 'task_id', 'call_id', 'projected_cost_usd', 'decision', 'budgets', 'budget_version', 'key_id', 'recorded_at'],
  },
  model_turn: {
    table: 'model_turns',
    key: 'toString(turn_id)',
    stored: 'ingested_at',
    created: 'created_at',
    fields: [
      'turn_id', 'task_id', 'agent_id', 'model', 'provider', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'cost_usd', 'cost_source', 'duration_ms', 'status',
      'error', 'requested_tool_calls', 'trace_id', 'span_id', 'created_at', 'fingerprint', 'source', 'ingested_at',
    ],
    optional: 'messages',
  },
  agent_run: {
    table: 'agent_runs',
    key: 'toString(run_id)',
    stored: 'ingested_at',
    created: 'created_at',
    fields: ['run_id', 'task_id', 'agent_id', 'name', 'duration_ms', 'status', 'error', 'trace_id', 'span_id', 'parent_span_id', 'created_at', 'fingerprint', 'source', 'ingested_at'],
  },
};

/** Each kind's leaf fields: its fields, then its optional one. */
const LEAF_FIELDS = Object.fromEntries(LEAF_KINDS.map((k) => [k, SOURCES[k].optional === undefined ? SOURCES[k].fields : [...SOURCES[k].fields, SOURCES[k].optional]])) as Record<LeafKind, readonly string[]>;

/** The fields of a kind's leaf data, in order; its optional field last (see {@link leafRequired}). */
export function leafFields(kind: LeafKind): readonly string[] {
  return LEAF_FIELDS[kind];
}

/** How many of a kind's leaf fields are always written; any after them only when not NULL. */
export function leafRequired(kind: LeafKind): number {
  return SOURCES[kind].fields.length;
}

/** The table a kind's rows are stored in. */
export function leafTable(kind: LeafKind): string {
  return SOURCES[kind].table;
}

/** `<length>:<text>\n` of a column; NULL is `-\n`, which no length-prefixed text can be. */
const field = (c: string) => `if(isNull(${c}), '-\\n', concat(toString(length(toString(assumeNotNull(${c})))), ':', toString(assumeNotNull(${c})), '\\n'))`;

/** The leaf data of a kind's row: a header line, then every field, then its optional field unless NULL. */
function leafData(kind: LeafKind): string {
  const s = SOURCES[kind];
  const optional = s.optional === undefined ? '' : `, if(isNull(${s.optional}), '', ${field(s.optional)})`;
  return `concat('tool-audit leaf v1 ${kind}\\n', ${s.fields.map(field).join(', ')}${optional})`;
}

/** SHA-256(0x00 ‖ leaf data) of a kind's row, 32 bytes. */
function leafHash(kind: LeafKind): string {
  return `SHA256(concat(char(0), ${leafData(kind)}))`;
}

/** The rank of a kind among records stored in the same millisecond (the log's order within one instant). */
const KIND_RANK: Record<LeafKind, number> = { tool_call: 1, output: 2, dependency: 3, violation: 4, manifest: 5, mcp_definition: 6, quarantine: 7, budget_decision: 8, model_turn: 9, agent_run: 10 };

/**
 * SELECT of a kind's leaves: kind, its rank, key, leaf hash (FixedString(32)), stored_at and
 * created_at, and the row's part (where verify says a record is); `where` filters the table and
 * may use {from:DateTime64(3)} and {to:DateTime64(3)}.
 */
export function leafSelect(kind: LeafKind, where: string): string {
  const s = SOURCES[kind];
  return `SELECT '${kind}' AS kind, ${KIND_RANK[kind]} AS kind_rank, ${s.key} AS record_key, ${leafHash(kind)} AS leaf_hash,
    ${s.stored} AS stored_at, ${s.created} AS created_at, _part AS part
  FROM {db:Identifier}.${s.table} WHERE ${where}`;
}

/**
 * SELECT of a kind's rows as the texts of their leaf fields (f0, f1, … in order; NULL as NULL) and
 * their storage time (stored_ms, epoch ms): leaf-data.ts's leafDataOf writes the leaf data.
 */
export function leafTextsSelect(kind: LeafKind, where: string): string {
  const s = SOURCES[kind];
  return `SELECT ${leafFields(kind).map((c, i) => `toString(${c}) AS f${i}`).join(', ')}, toUnixTimestamp64Milli(${s.stored}) AS stored_ms FROM {db:Identifier}.${s.table} WHERE ${where}`;
}

/** A kind's column of storage time (ingested_at, or detected_at of a violation). */
export function storedColumn(kind: LeafKind): string {
  return SOURCES[kind].stored;
}

/** A kind's column of when the record says it happened (what retention goes by; a leaf's created_at). */
export function createdColumn(kind: LeafKind): string {
  return SOURCES[kind].created;
}

/** The keys table of the kinds that have one (ordered by the id: a primary-key read), with its id column and its task column. */
const KEYS_TABLES: Partial<Record<LeafKind, { table: string; id: string; task: string }>> = {
  tool_call: { table: 'call_keys', id: 'call_id', task: 'task_id' },
  output: { table: 'output_keys', id: 'output_id', task: "''" },
};

/**
 * A WHERE of a kind's row by its key ({key:String}) and, for a call or an output, its created_at
 * ({created:Int64}, epoch ms, from its keys table: {@link keyPlaceSelect}), as its table's indexes
 * can use it. A call's table is ordered by (task_id, created_at, call_id): with its task
 * ({task:String}, kept in the keys table since migration 043) the row is a primary-key read; for
 * a call stored before, the tasks of calls created in that millisecond come from the projection by
 * created_at (~8 ms more at 10 M calls; ~95 ms through the bloom filter on call_id, which reads ~2
 * bytes of index per stored row). An output's created_at prunes its parts and granules. A row whose
 * created_at or task was changed afterwards is not found this way ({@link keysFilter} finds it).
 */
export function keyFilter(kind: LeafKind, withTask = false): string {
  const created = "created_at = fromUnixTimestamp64Milli({created:Int64}, 'UTC')";
  if (kind === 'tool_call' && withTask) return `task_id = {task:String} AND ${created} AND call_id = toUUIDOrZero({key:String})`;
  if (kind === 'tool_call') return `call_id = toUUIDOrZero({key:String}) AND ${created} AND task_id IN (SELECT task_id FROM {db:Identifier}.tool_invocations WHERE ${created})`;
  if (kind === 'output') return `output_id = toUUIDOrZero({key:String}) AND ${created}`;
  // By the id itself, which the table's bloom filter serves (its text form would be a scan).
  if (kind === 'model_turn') return 'turn_id = toUUIDOrZero({key:String})';
  if (kind === 'agent_run') return 'run_id = toUUIDOrZero({key:String})';
  return `${SOURCES[kind].key} = {key:String}`;
}

/**
 * A SELECT of a call's or an output's place by its key ({key:String}) in its keys table (a
 * primary-key read): `created_ms` (epoch ms) and `task` ('' for an output or a call stored before
 * its keys kept it), no row for an unknown key; undefined for kinds without a keys table.
 */
export function keyPlaceSelect(kind: LeafKind): string | undefined {
  const k = KEYS_TABLES[kind];
  return k && `SELECT toString(toUnixTimestamp64Milli(created_at)) AS created_ms, ${k.task} AS task FROM {db:Identifier}.${k.table} WHERE ${k.id} = toUUIDOrZero({key:String}) LIMIT 1`;
}

/** A WHERE of a kind's rows whose key is one of {keys:Array(String)}. */
export function keysFilter(kind: LeafKind): string {
  if (kind === 'tool_call') return 'call_id IN arrayMap(k -> toUUIDOrZero(k), {keys:Array(String)})';
  if (kind === 'output') return 'output_id IN arrayMap(k -> toUUIDOrZero(k), {keys:Array(String)})';
  if (kind === 'model_turn') return 'turn_id IN arrayMap(k -> toUUIDOrZero(k), {keys:Array(String)})';
  if (kind === 'agent_run') return 'run_id IN arrayMap(k -> toUUIDOrZero(k), {keys:Array(String)})';
  return `${SOURCES[kind].key} IN {keys:Array(String)}`;
}

/** Leaves per block: the lowest level of stored subtree roots (2^8). */
export const BLOCK = 256;

/** The elements of an array at odd (1st, 3rd, …) or even positions: the left and right of each pair. */
const side = (l: string, odd: boolean) => `arrayFilter((v, i) -> i % 2 = ${odd ? 1 : 0}, ${l}, arrayEnumerate(${l}))`;

/**
 * Each block of 256 leaves in [a, b) with its root computed by ClickHouse where the leaves are: 8
 * levels of RFC 9162 node hashes, each level a subquery over the one below, its pairs zipped from
 * the left and right elements (a lambda that indexed into the level below instead copied that
 * array into every element: 0.86 s per million leaves against 0.1 s). A block of other than 256
 * leaves is cut or padded to 256 first (zipping needs pairs), and named by its count `c`. Params
 * {a:UInt64}, {b:UInt64}. The builder stores these roots (level 8); verify checks them.
 */
export const BLOCK_ROOTS = (() => {
  let q = `SELECT intDiv(leaf_index, ${BLOCK}) AS blk, count() AS c, arrayResize(arrayMap(p -> p.2, arraySort(p -> p.1, groupArray((leaf_index, leaf_hash)))), ${BLOCK}) AS l
    FROM {db:Identifier}.audit_log_leaves WHERE leaf_index >= {a:UInt64} AND leaf_index < {b:UInt64} GROUP BY blk`;
  for (let level = 1; level <= 8; level++) q = `SELECT blk, c, arrayMap((x, y) -> SHA256(concat(char(1), x, y)), ${side('l', true)}, ${side('l', false)}) AS l FROM (${q})`;
  return q;
})();
