/**
 * The one door to ClickHouse: every statement and insert of tool-audit goes through it, so there
 * is one error map (what a failure means and whether a retry may help) and one rule for the
 * deduplication token of an insert. Stages take a {@link ClickHouseDoor}; none holds a client.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { AppError, errorMessage } from '../errors.ts';
import { clickhouseError, statementName, tsvUnescape } from './error-map.ts';
import { StatementGate, type GateState, type Lane } from './gate.ts';
import { settingsClause, type QuerySpec, type ReadLimits, type StatementRunner } from './statement.ts';
import type { MetricsRegistry } from '../metrics.ts';

export { clickhouseError, tsvUnescape } from './error-map.ts';

/**
 * A row to insert with the key that identifies it among every row of its table, whoever writes
 * it (the deduplication token is made of keys: two writers keying different rows alike would
 * have one insert dropped as the other's retry).
 */
export interface KeyedRow {
  key: string;
  row: object;
}

/** Statements and inserts against one database. */
export interface ClickHouseDoor extends StatementRunner {
  /** The database every statement's `{db:Identifier}` and every insert's table refer to. */
  readonly database: string;
  /**
   * Runs a SELECT and returns its rows (JSONEachRow); `db` is bound unless params name it.
   * `settings` stay set for the rest of the session on embedded ClickHouse (chDB): pass only
   * settings harmless to later statements, or put them in the statement's SETTINGS clause.
   */
  select<T>(query: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<T[]>;
  /**
   * Runs a SELECT and returns its rows as TabSeparated fields, unescaped: for large answers of a
   * few plain columns (key look-ups), about half the time of parsing them as JSON objects.
   */
  selectFields(query: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<string[][]>;
  /** Runs a read statement of queries/ under its limits; a limit hit is `CLICKHOUSE_LIMIT_EXCEEDED`. */
  read<T>(spec: Pick<QuerySpec, 'name' | 'sql' | 'settings'>, params: Record<string, unknown>, ctx: ReadLimits): Promise<T[]>;
  /** Runs a statement that returns no rows (DDL, INSERT … SELECT); `settings` as for {@link select}. */
  command(query: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<void>;
  /** Inserts rows as JSONEachRow; a retry of the same keys is a no-op inside ClickHouse's dedup window. */
  insertRows(table: string, rows: readonly KeyedRow[]): Promise<void>;
  /** Inserts TabSeparated lines of the given columns, one line per key (same token rule). */
  insertLines(table: string, columns: readonly string[], body: Buffer, keys: readonly string[]): Promise<void>;
  /** Whether ClickHouse answers, for readiness probes (never queued behind other statements). */
  ping(): Promise<{ ok: boolean; detail?: string }>;
  /**
   * The same door with every statement in `lane` (gate.ts): background jobs take `lane('job')`,
   * so their statements go after reads and ingest. Without a lane, `read()` is a read and the
   * rest is ingest. Once `signal` is aborted, every statement of that door fails at once with
   * `SHUTTING_DOWN` (a job working through a long backlog stops at its next statement).
   */
  lane(lane: Lane, signal?: AbortSignal): ClickHouseDoor;
  /** Statements running and waiting at the gate; null where ClickHouse schedules them itself (a server). */
  gateState(): GateState | null;
  /** Closes the client under the door. */
  close(): Promise<void>;
}

/**
 * The one deduplication-token rule: the table and the sorted keys of the rows. A retried insert
 * of the same rows — in whatever order — is skipped by ClickHouse inside its dedup window; key
 * look-ups (ingest) and anti-joins (analyzers) cover what lies beyond it.
 */
export function dedupToken(table: string, keys: readonly string[]): string {
  // One update of the joined text: the same bytes as one update per key, a fraction of the calls.
  return createHash('sha256').update(`${table}\n${[...keys].sort().join('\n')}`).digest('hex');
}

// Every insert also reaches the materialized views of its table (task_rows, orphan_outputs): a
// retry after a view failed must still write the view's missing rows, so each dependent table
// deduplicates on its own.
const INSERT_SETTINGS = { deduplicate_blocks_in_dependent_materialized_views: 1, date_time_input_format: 'best_effort' } as const;

type RawInsert = (p: { table: string; values: Buffer; format: 'TabSeparated' | 'JSONEachRow'; columns?: readonly string[]; settings: Record<string, string | number> }) => Promise<unknown>;

/**
 * Embedded ClickHouse (chDB) takes an insert body as a Buffer, with its settings in the INSERT
 * statement itself. Both matter: the client's generic insert converts the body twice, and chDB
 * applies `clickhouse_settings` as session-wide SETs, so an insert's deduplication token would
 * stay set for every later statement of the process (an INSERT … SELECT of a migration or of
 * the dedup indexer would then be dropped as a duplicate). Found by feature detection on the
 * client's connection; any other client takes settings per request.
 */
function chdbRawInsert(ch: ClickHouseClient): RawInsert | undefined {
  const raw = (ch as unknown as { connection?: { chdb?: { rawInsert?: unknown } } }).connection?.chdb?.rawInsert;
  return typeof raw === 'function' ? (raw as RawInsert) : undefined;
}

/** How the statements of a door are scheduled (issue 22). */
export interface DoorOptions {
  /** A job's statement may run this long on a ClickHouse server (`max_execution_time`); default 300 s. */
  jobMaxExecutionSeconds?: number;
  /** A statement waiting this long at the embedded gate goes next whatever its lane; default 2,000 ms. */
  agingMs?: number;
  /** Where each statement's wait at the gate and its run time are recorded, per lane. */
  metrics?: MetricsRegistry;
}

// One gate per embedded client: chDB runs one statement at a time per process, whichever door
// (database) it comes from. A server schedules concurrent statements itself.
const gates = new WeakMap<ClickHouseClient, StatementGate>();

/**
 * Per-lane settings sent to a ClickHouse server, where statements run concurrently: its own
 * `priority` (1 is the most urgent; a lower-priority query is paused while a higher one runs)
 * and a time bound on jobs, whose statements are slices meant to be short.
 */
function serverSettings(lane: Lane, jobSeconds: number): ClickHouseSettings {
  return lane === 'read' ? { priority: '1' } : lane === 'ingest' ? { priority: '2' } : { priority: '3', max_execution_time: jobSeconds };
}

/** Opens the door of `database` on a client (which the door then owns: close() closes it). */
export function createClickHouseDoor(ch: ClickHouseClient, database: string, opts: DoorOptions = {}): ClickHouseDoor {
  const rawInsert = chdbRawInsert(ch);
  let gate = gates.get(ch);
  if (rawInsert && !gate) gates.set(ch, (gate = new StatementGate(1, opts.agingMs ?? 2_000)));
  return openDoor({ ch, database, rawInsert, gate, jobSeconds: opts.jobMaxExecutionSeconds ?? 300, metrics: opts.metrics }, undefined);
}

interface DoorParts {
  signal?: AbortSignal | undefined;
  metrics?: MetricsRegistry | undefined;
  ch: ClickHouseClient;
  database: string;
  rawInsert: RawInsert | undefined;
  gate: StatementGate | undefined;
  jobSeconds: number;
}

function openDoor(parts: DoorParts, fixed: Lane | undefined): ClickHouseDoor {
  const { ch, database, rawInsert, gate } = parts;
  const bind = (params: Record<string, unknown> = {}) => ('db' in params ? params : { db: database, ...params });
  const table = (name: string) => `${database}.${name}`;
  const laneOf = (isRead: boolean): Lane => fixed ?? (isRead ? 'read' : 'ingest');
  // Settings of a statement: on the gate (chDB applies clickhouse_settings session-wide, see
  // INSERT_SETTINGS) only the caller's; on a server, the lane's too.
  const withLane = (lane: Lane, settings?: ClickHouseSettings): ClickHouseSettings | undefined =>
    gate ? settings : { ...serverSettings(lane, parts.jobSeconds), ...settings };
  const settingsOf = (lane: Lane, settings?: ClickHouseSettings) => {
    const merged = withLane(lane, settings);
    return merged && Object.keys(merged).length > 0 ? { clickhouse_settings: merged } : {};
  };
  const open = (): void => {
    if (parts.signal?.aborted) throw new AppError('SHUTTING_DOWN', `the ${fixed ?? 'door'} statements of ${database} are stopped`, { retryable: false });
  };
  /** Runs `send` in its turn; the result is read after the slot is given back (chDB has materialized it). */
  const turn = async <T>(lane: Lane, send: () => Promise<T>): Promise<T> => {
    open();
    const asked = performance.now();
    let began = asked;
    const timed = (): Promise<T> => {
      // Checked again when its turn comes: it may have waited behind other statements meanwhile.
      open();
      began = performance.now();
      return send();
    };
    try {
      return await (gate ? gate.run(lane, timed) : timed());
    } finally {
      const m = parts.metrics;
      if (m) {
        const done = performance.now();
        m.observe('tool_audit_clickhouse_wait_seconds', 'Time a statement waited for its turn at the embedded gate, per lane', (began - asked) / 1000, { lane });
        m.observe('tool_audit_clickhouse_statement_seconds', 'Time a statement ran in ClickHouse (to its result, before decoding), per lane', (done - began) / 1000, { lane });
      }
    }
  };
  const insert = async (name: string, run: () => Promise<unknown>) => {
    try {
      await turn(laneOf(false), run);
    } catch (err) {
      throw clickhouseError(err, `insert into ${name}`);
    }
  };

  async function select<T>(query: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<T[]> {
    const lane = laneOf(false);
    try {
      const rs = await turn(lane, () => ch.query({ query, query_params: bind(params), format: 'JSONEachRow', ...settingsOf(lane, settings) }));
      return await rs.json<T>();
    } catch (err) {
      throw clickhouseError(err, statementName(query));
    }
  }

  async function selectFields(query: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<string[][]> {
    const lane = laneOf(false);
    let text: string;
    try {
      const rs = await turn(lane, () => ch.query({ query, query_params: bind(params), format: 'TabSeparated', ...settingsOf(lane, settings) }));
      text = await rs.text();
    } catch (err) {
      throw clickhouseError(err, statementName(query));
    }
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop(); // every row ends with a newline
    return lines.map((line) => line.split('\t').map(tsvUnescape));
  }

  return {
    database,
    select,
    selectFields,
    async read(spec, params, ctx) {
      const started = performance.now();
      const lane = laneOf(true);
      try {
        const query = spec.sql + settingsClause(ctx.limits, spec.settings);
        const rs = await turn(lane, () => ch.query({ query, query_params: bind(params), format: 'JSONEachRow', ...settingsOf(lane) }));
        const rows = await rs.json<never>();
        ctx.metrics?.observe('tool_audit_query_seconds', 'Read query latency (ClickHouse + decoding)', (performance.now() - started) / 1000, { query: spec.name });
        return rows;
      } catch (err) {
        const e = clickhouseError(err, `query ${spec.name}`);
        const reason = e.code === 'CLICKHOUSE_LIMIT_EXCEEDED' ? 'limit' : 'error';
        ctx.metrics?.inc('tool_audit_query_failures_total', 'Read queries that failed', { query: spec.name, reason });
        throw e;
      }
    },
    async command(query, params, settings) {
      const lane = laneOf(false);
      try {
        await turn(lane, () => ch.command({ query, query_params: bind(params), ...settingsOf(lane, settings) }));
      } catch (err) {
        throw clickhouseError(err, statementName(query, 'statement'));
      }
    },
    async insertRows(name, rows) {
      if (rows.length === 0) return;
      const settings = { ...INSERT_SETTINGS, insert_deduplication_token: dedupToken(name, rows.map((r) => r.key)) };
      const values = rows.map((r) => r.row);
      await insert(name, () =>
        rawInsert
          ? rawInsert({ table: table(name), values: Buffer.from(values.map((v) => JSON.stringify(v)).join('\n')), format: 'JSONEachRow', settings })
          : ch.insert({ table: table(name), values, format: 'JSONEachRow', clickhouse_settings: { ...withLane(laneOf(false)), ...settings } }),
      );
    },
    async insertLines(name, columns, body, keys) {
      if (keys.length === 0) return;
      const settings = { ...INSERT_SETTINGS, insert_deduplication_token: dedupToken(name, keys) };
      await insert(name, () =>
        rawInsert
          ? rawInsert({ table: table(name), values: body, format: 'TabSeparated', columns, settings })
          : ch.insert({
              table: table(name),
              values: Readable.from([body], { objectMode: false }),
              format: 'TabSeparated',
              columns: columns as [string, ...string[]],
              clickhouse_settings: { ...withLane(laneOf(false)), ...settings },
            }),
      );
    },
    async ping() {
      try {
        const r = await ch.ping();
        return r.success ? { ok: true } : { ok: false, detail: errorMessage(r.error) };
      } catch (err) {
        return { ok: false, detail: errorMessage(err) };
      }
    },
    lane: (lane, signal) => openDoor(signal ? { ...parts, signal } : parts, lane),
    gateState: () => gate?.state() ?? null,
    close: () => ch.close(),
  };
}
