/**
 * The auditor's invariant checks I4, I8, I9 and I11 as `INSERT INTO violations … SELECT`
 * statements: ClickHouse finds the violating rows of one ingest step, builds each violation as
 * audit-rules.ts `violation()` does (same key, ids and detail), leaves out keys already recorded
 * and writes the rest. No violating row passes through the process, so the auditor's memory does
 * not depend on how many rows break a rule (I11 alone matched 9.7 M rows).
 */
import type { ClickHouseDoor } from '../platform/clickhouse/door.ts';

/** I11 compares with what the same stream sent shortly before the step, too. */
export const I11_LOOKBACK_MS = 3600_000;

const STEP = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`;

/** One check: what it finds (the columns of `violations`) and a superset of the keys it can find. */
interface Check {
  invariant: 'I4' | 'I8' | 'I9' | 'I11';
  /** SELECT violation_key, invariant, packet_type, ids, detail of the step's violations. */
  found: string;
  /** SELECT of keys covering every key `found` can yield: bounds the anti-join's look-up in `violations`. */
  keys: string;
}

const I4: Check = {
  invariant: 'I4',
  found: `SELECT concat('I4/no-error/', toString(call_id)) AS violation_key, 'I4' AS invariant, 'tool_call' AS packet_type, [toString(call_id)] AS ids,
            concat('status ', toString(status), ' of ', tool_id, ' has no error message') AS detail
          FROM {db:Identifier}.tool_invocations WHERE ${STEP} AND status != 'success' AND error IS NULL`,
  keys: `SELECT concat('I4/no-error/', toString(call_id)) FROM {db:Identifier}.tool_invocations WHERE ${STEP} AND status != 'success' AND error IS NULL`,
};

// An output whose call is missing, or whose call did not succeed (join_use_nulls: status is NULL
// when the call is missing, as the JS rule read it).
const I8_CALL: Check = {
  invariant: 'I8',
  found: `SELECT concat('I8/', kind, '/', oid, ',', cid) AS violation_key, 'I8' AS invariant, 'output_artifact' AS packet_type, [oid, cid] AS ids,
            if(status IS NULL, concat('output references call ', cid, ', which has no tool_call'),
                               concat('output of call ', cid, ' whose status is ', assumeNotNull(status), ', not success')) AS detail
          FROM (SELECT toString(o.output_id) AS oid, toString(o.call_id) AS cid, toString(i.status) AS status,
                       if(i.call_id IS NULL, 'no-call', 'call-not-success') AS kind
                FROM (SELECT output_id, call_id FROM {db:Identifier}.tool_outputs WHERE ${STEP}) AS o
                LEFT JOIN (SELECT call_id, status FROM {db:Identifier}.tool_invocations
                           WHERE call_id IN (SELECT call_id FROM {db:Identifier}.tool_outputs WHERE ${STEP})) AS i ON o.call_id = i.call_id
                WHERE i.call_id IS NULL OR i.status != 'success'
                SETTINGS join_use_nulls = 1)`,
  keys: `SELECT arrayJoin([concat('I8/no-call/', toString(output_id), ',', toString(call_id)), concat('I8/call-not-success/', toString(output_id), ',', toString(call_id))])
         FROM {db:Identifier}.tool_outputs WHERE ${STEP}`,
};

// Its key names every output of the call, so the key set is the finding itself.
const I8_SEVERAL_FOUND = `SELECT concat('I8/several-outputs/', cid, ',', arrayStringConcat(oids, ',')) AS violation_key, 'I8' AS invariant, 'output_artifact' AS packet_type,
            arrayConcat([cid], oids) AS ids, concat('call ', cid, ' has ', toString(length(oids)), ' outputs; at most one is allowed') AS detail
          FROM (SELECT toString(call_id) AS cid, arraySort(groupArray(toString(output_id))) AS oids
                FROM {db:Identifier}.tool_outputs
                WHERE call_id IN (SELECT call_id FROM {db:Identifier}.tool_outputs WHERE ${STEP})
                GROUP BY call_id HAVING count() > 1)`;
const I8_SEVERAL: Check = { invariant: 'I8', found: I8_SEVERAL_FOUND, keys: `SELECT violation_key FROM (${I8_SEVERAL_FOUND})` };

const I9: Check = {
  invariant: 'I9',
  found: `WITH ws AS (SELECT task_id, preceding_call_id AS p, succeeding_call_id AS s FROM {db:Identifier}.tool_workflows WHERE ${STEP})
          SELECT concat('I9/missing-call/', toString(p), ',', toString(s)) AS violation_key, 'I9' AS invariant, 'tool_dependency' AS packet_type,
                 [toString(p), toString(s)] AS ids,
                 concat('dependency in task ', task_id, ' references missing tool_call ',
                        arrayStringConcat(arrayFilter(x -> x != '', [if(has_p, '', toString(p)), if(has_s, '', toString(s))]), ' and ')) AS detail
          FROM (SELECT task_id, p, s,
                       p IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE call_id IN (SELECT p FROM ws)) AS has_p,
                       s IN (SELECT call_id FROM {db:Identifier}.tool_invocations WHERE call_id IN (SELECT s FROM ws)) AS has_s
                FROM ws)
          WHERE NOT has_p OR NOT has_s`,
  keys: `SELECT concat('I9/missing-call/', toString(preceding_call_id), ',', toString(succeeding_call_id)) FROM {db:Identifier}.tool_workflows WHERE ${STEP}`,
};

// A call whose created_at is earlier than that of a call its instance sent before it on the same
// stream (source without its @offset / #index), among the calls ingested since {lookback}.
const I11: Check = {
  invariant: 'I11',
  found: `SELECT concat('I11/backwards/', id) AS violation_key, 'I11' AS invariant, 'tool_call' AS packet_type, [id] AS ids,
            concat('instance ', instance_id, ' sent created_at ', toString(created_at), ' after ', toString(prev_max), ': time went backwards') AS detail
          FROM (SELECT instance_id, toString(call_id) AS id, created_at, ingested_at,
                       max(created_at) OVER (PARTITION BY instance_id, replaceRegexpOne(source, '[@#][0-9]+$', '')
                                             ORDER BY toUInt64OrZero(extract(source, '[@#]([0-9]+)$'))
                                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_max
                FROM {db:Identifier}.tool_invocations
                WHERE ingested_at > fromUnixTimestamp64Milli({lookback:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC'))
          WHERE created_at < prev_max AND ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')`,
  keys: `SELECT concat('I11/backwards/', toString(call_id)) FROM {db:Identifier}.tool_invocations WHERE ${STEP}`,
};

const CHECKS: readonly Check[] = [I4, I8_CALL, I8_SEVERAL, I9, I11];

/** The invariants the statements record. */
export const CHECKED_INVARIANTS = ['I4', 'I8', 'I9', 'I11'] as const;

/**
 * The INSERT of one check. Already recorded keys are found by key among the step's possible keys
 * only (bloom-filter index on violation_key, within the invariant's primary-key range), so the
 * look-up does not grow with how many violations are stored. `LIMIT 1 BY` keeps one row per key
 * (a call stored twice, an output joined to a call stored twice). No deduplication token: a retry
 * recomputes and inserts exactly the keys still missing, and a token would drop a retried block
 * that differs from a partly written first attempt.
 */
function insertOf(c: Check): string {
  return `INSERT INTO {db:Identifier}.violations (violation_key, invariant, packet_type, ids, detail, detected_at)
    SELECT violation_key, invariant, packet_type, ids, detail, fromUnixTimestamp64Milli({at:Int64}, 'UTC')
    FROM (${c.found})
    WHERE violation_key NOT IN (SELECT violation_key FROM {db:Identifier}.violations
                                WHERE invariant = '${c.invariant}' AND violation_key IN (${c.keys}))
    LIMIT 1 BY violation_key`;
}

/** What one step's checks recorded, per invariant. */
export type CheckCounts = Partial<Record<(typeof CHECKED_INVARIANTS)[number], number>>;

/**
 * Runs every check over the rows ingested in (fromMs, toMs], all stamped detected_at = `atMs`,
 * and counts what they recorded by that stamp (the primary key's prefix: a cheap count). `atMs`
 * must be unique per step within the process, so the count is of this step's rows only.
 */
export async function runInvariantChecks(ch: ClickHouseDoor, fromMs: number, toMs: number, atMs: number, lookbackMs: number): Promise<CheckCounts> {
  const params = { from: fromMs, to: toMs, lookback: lookbackMs, at: atMs };
  for (const c of CHECKS) await ch.command(insertOf(c), params);
  const rows = await ch.select<{ invariant: string; n: string }>(
    `SELECT invariant, count() AS n FROM {db:Identifier}.violations
     WHERE invariant IN ('I4', 'I8', 'I9', 'I11') AND detected_at = fromUnixTimestamp64Milli({at:Int64}, 'UTC') GROUP BY invariant`,
    { at: atMs },
  );
  const out: CheckCounts = {};
  for (const r of rows) out[r.invariant as keyof CheckCounts] = Number(r.n);
  return out;
}
