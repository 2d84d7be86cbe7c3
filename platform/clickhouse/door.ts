/**
 * The one door to ClickHouse: every statement and insert of tool-audit goes through it, so there
 * is one error map (what a failure means and whether a retry may help) and one rule for the
 * deduplication token of an insert. Stages take a {@link ClickHouseDoor}; none holds a client.
 */
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { AppError } from '../errors.ts';
import type { LaneClients } from './client.ts';
import { clickhouseError, statementName, tsvUnescape } from './error-map.ts';
import { tailWrittenFile, type ExportFormatName } from './export-stream.ts';
import type { GateState, Lane } from './gate.ts';
import { laneConnections, type Connection, type LaneConnections } from './lanes.ts';
import { isKeySet, renderStatement } from './literals.ts';
import { parseLines } from './result-lines.ts';
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
   * Runs a SELECT and returns its rows (JSONEachRow); `{db:Identifier}` is the door's database
   * unless params name it. `settings` stay set for the rest of the session of the lane's
   * connection on embedded ClickHouse (chDB): pass only settings harmless to later statements,
   * or put them in the statement's SETTINGS clause.
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
  /**
   * Runs a SELECT and yields its answer in `format` as bytes as they come, holding none of it (an
   * export of millions of rows): a server's answer is streamed; embedded ClickHouse writes it to a
   * file of the scratch folder that is read as it grows (export-stream.ts). `settings` are this
   * statement's only.
   */
  exportRows(query: string, params: Record<string, unknown>, format: ExportFormatName, settings: Record<string, string | number>): AsyncIterable<Buffer>;
  /** Whether ClickHouse answers, for readiness probes (never queued behind other statements). */
  ping(): Promise<{ ok: boolean; detail?: string }>;
  /**
   * The same door with every statement in `lane` (gate.ts): background jobs take `lane('job')`,
   * so their statements go after reads and ingest. Without a lane, `read()` is a read and the
   * rest is ingest. Once `signal` is aborted, every statement of that door fails at once with
   * `SHUTTING_DOWN` (a job working through a long backlog stops at its next statement).
   */
  lane(lane: Lane, signal?: AbortSignal): ClickHouseDoor;
  /** Statements running and waiting at the gates; null where ClickHouse schedules them itself (a server). */
  gateState(): GateState | null;
  /** Closes the clients under the door. */
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

/** How the statements of a door are scheduled and sent: reads before ingest before jobs, a connection per lane. */
export interface DoorOptions {
  /** A job's statement may run this long on a ClickHouse server (`max_execution_time`); default 300 s. */
  jobMaxExecutionSeconds?: number;
  /** A statement waiting this long at an embedded connection's gate goes next whatever its lane; default 2,000 ms. */
  agingMs?: number;
  /** Where each statement's wait at the gate and its run time are recorded, per lane. */
  metrics?: MetricsRegistry;
  /**
   * How values reach the engine: `render` as typed, escaped literals (literals.ts), `bind` as
   * query parameters. Default: `render` on the embedded engine (chdb-node runs every bound
   * statement of the process one at a time, whatever its connection), `bind` on a server.
   */
  parameters?: 'render' | 'bind';
  /** Where embedded ClickHouse writes an export while it is read (default: the system's temporary folder). */
  scratchDir?: string;
}

/**
 * Per-lane settings sent to a ClickHouse server, where statements run concurrently: its own
 * `priority` (1 is the most urgent; a lower-priority query is paused while a higher one runs)
 * and a time bound on jobs, whose statements are slices meant to be short.
 */
function serverSettings(lane: Lane, jobSeconds: number): ClickHouseSettings {
  return lane === 'read' ? { priority: '1' } : lane === 'ingest' ? { priority: '2' } : { priority: '3', max_execution_time: jobSeconds };
}

/**
 * Opens the door of `database` on a client, or on the clients of each lane (client.ts's
 * createLaneClients); the door then owns them: close() closes them.
 */
export function createClickHouseDoor(clients: ClickHouseClient | LaneClients, database: string, opts: DoorOptions = {}): ClickHouseDoor {
  const conns = laneConnections(clients, opts.agingMs ?? 2_000);
  const render = (opts.parameters ?? (conns.embedded ? 'render' : 'bind')) === 'render';
  const scratchDir = opts.scratchDir ?? join(tmpdir(), 'tool-audit-exports');
  return openDoor({ conns, database, render, jobSeconds: opts.jobMaxExecutionSeconds ?? 300, metrics: opts.metrics, scratchDir }, undefined);
}

interface DoorParts {
  signal?: AbortSignal | undefined;
  metrics?: MetricsRegistry | undefined;
  conns: LaneConnections;
  database: string;
  render: boolean;
  jobSeconds: number;
  scratchDir: string;
}

/** The statement text and parameters as sent: values rendered into the text, or bound. */
type Prepared = { query: string; query_params?: Record<string, unknown> };

const KEY_SET_NAMES = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*KeySet\(/g;

/**
 * Room for a statement as sent, when its rendered values (key sets above all) may outgrow the
 * default max_query_size (256 KiB; a UTF-16 unit is at most 3 bytes of UTF-8, so below 80,000 units
 * it fits): three bytes a unit, at least 4 MB. Undefined for a statement that fits.
 */
function sizedFor(query: string): ClickHouseSettings | undefined {
  return query.length < 80_000 ? undefined : { max_query_size: String(Math.max(4_000_000, 3 * query.length + 1000)) };
}

function openDoor(parts: DoorParts, fixed: Lane | undefined): ClickHouseDoor {
  const { conns, database } = parts;
  /** The statement as sent, and the settings its key sets need (literals.ts: always rendered). */
  const prepare = (query: string, params: Record<string, unknown> = {}): { prepared: Prepared; sized?: ClickHouseSettings } => {
    const all = 'db' in params ? params : { db: database, ...params };
    if (parts.render) {
      const rendered = renderStatement(query, all);
      return { prepared: { query: rendered }, sized: sizedFor(rendered) };
    }
    // Bound values, but key sets rendered (literals.ts says why) and left out of the parameters.
    const keySets = new Set([...query.matchAll(KEY_SET_NAMES)].map((m) => m[1] as string));
    if (!keySets.size) return { prepared: { query, query_params: all } };
    const rendered = renderStatement(query, all, isKeySet);
    const bound = Object.fromEntries(Object.entries(all).filter(([k]) => !keySets.has(k)));
    return { prepared: { query: rendered, query_params: bound }, sized: sizedFor(rendered) };
  };
  const table = (name: string) => `${database}.${name}`;
  const laneOf = (isRead: boolean): Lane => fixed ?? (isRead ? 'read' : 'ingest');
  // Settings of a statement: on an embedded connection (chDB applies clickhouse_settings
  // session-wide, see INSERT_SETTINGS) only the caller's; on a server, the lane's too.
  const withLane = (c: Connection, lane: Lane, settings?: ClickHouseSettings): ClickHouseSettings | undefined =>
    c.gate ? settings : { ...serverSettings(lane, parts.jobSeconds), ...settings };
  const settingsOf = (c: Connection, lane: Lane, settings?: ClickHouseSettings) => {
    const merged = withLane(c, lane, settings);
    return merged && Object.keys(merged).length > 0 ? { clickhouse_settings: merged } : {};
  };
  const open = (): void => {
    if (parts.signal?.aborted) throw new AppError('SHUTTING_DOWN', `the ${fixed ?? 'door'} statements of ${database} are stopped`, { retryable: false });
  };
  /** Runs `send` in its turn on a connection of `lane`; the result is read after the turn (chDB has materialized it). */
  const turn = async <T>(lane: Lane, send: (c: Connection) => Promise<T>): Promise<T> => {
    open();
    const asked = performance.now();
    let began = asked;
    try {
      // Checked again when its turn comes: it may have waited behind other statements meanwhile.
      return await conns.run(lane, send, () => {
        open();
        began = performance.now();
      });
    } finally {
      const m = parts.metrics;
      if (m) {
        const done = performance.now();
        m.observe('tool_audit_clickhouse_wait_seconds', 'Time a statement waited for its turn at its connection, per lane', (began - asked) / 1000, { lane });
        m.observe('tool_audit_clickhouse_statement_seconds', 'Time a statement ran in ClickHouse (to its result, before decoding), per lane', (done - began) / 1000, { lane });
      }
    }
  };
  const query = (lane: Lane, sql: string, params: Record<string, unknown> | undefined, format: 'JSONEachRow' | 'TabSeparated', settings?: ClickHouseSettings) => {
    const { prepared, sized } = prepare(sql, params);
    return turn(lane, (c) => c.ch.query({ ...prepared, format, ...settingsOf(c, lane, sized ? { ...sized, ...settings } : settings) }));
  };
  const insert = async (name: string, body: Buffer | object[], format: 'TabSeparated' | 'JSONEachRow', keys: readonly string[], columns?: readonly string[]) => {
    const settings = { ...INSERT_SETTINGS, insert_deduplication_token: dedupToken(name, keys) };
    const lane = laneOf(false);
    try {
      await turn(lane, (c) => {
        if (c.rawInsert) {
          // chDB: the body as a Buffer (the client's generic insert converts it twice) and the
          // settings in the INSERT itself (as clickhouse_settings they would stay set for every
          // later statement of the connection: a later INSERT … SELECT would be dropped as a duplicate).
          const values = Buffer.isBuffer(body) ? body : Buffer.from(body.map((v) => JSON.stringify(v)).join('\n'));
          return c.rawInsert({ table: table(name), values, format, settings, ...(columns ? { columns } : {}) });
        }
        const values = Buffer.isBuffer(body) ? Readable.from([body], { objectMode: false }) : body;
        return c.ch.insert({ table: table(name), values, format, ...(columns ? { columns: columns as [string, ...string[]] } : {}), clickhouse_settings: { ...withLane(c, lane), ...settings } });
      });
    } catch (err) {
      throw clickhouseError(err, `insert into ${name}`);
    }
  };

  return {
    database,
    async select<T>(sql: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<T[]> {
      let text: string;
      try {
        text = await (await query(laneOf(false), sql, params, 'JSONEachRow', settings)).text();
      } catch (err) {
        throw clickhouseError(err, statementName(sql));
      }
      return parseLines(text, (line) => JSON.parse(line) as T);
    },
    async selectFields(sql, params, settings) {
      let text: string;
      try {
        text = await (await query(laneOf(false), sql, params, 'TabSeparated', settings)).text();
      } catch (err) {
        throw clickhouseError(err, statementName(sql));
      }
      return parseLines(text, (line) => line.split('\t').map(tsvUnescape));
    },
    async read(spec, params, ctx) {
      const started = performance.now();
      try {
        const rows = await (await query(laneOf(true), spec.sql + settingsClause(ctx.limits, spec.settings), params, 'JSONEachRow')).json<never>();
        ctx.metrics?.observe('tool_audit_query_seconds', 'Read query latency (ClickHouse + decoding)', (performance.now() - started) / 1000, { query: spec.name });
        return rows;
      } catch (err) {
        const e = clickhouseError(err, `query ${spec.name}`);
        const reason = e.code === 'CLICKHOUSE_LIMIT_EXCEEDED' ? 'limit' : 'error';
        ctx.metrics?.inc('tool_audit_query_failures_total', 'Read queries that failed', { query: spec.name, reason });
        throw e;
      }
    },
    async command(sql, params, settings) {
      const lane = laneOf(false);
      try {
        const { prepared, sized } = prepare(sql, params);
        await turn(lane, (c) => c.ch.command({ ...prepared, ...settingsOf(c, lane, sized ? { ...sized, ...settings } : settings) }));
      } catch (err) {
        throw clickhouseError(err, statementName(sql, 'statement'));
      }
    },
    async insertRows(name, rows) {
      if (rows.length > 0) await insert(name, rows.map((r) => r.row), 'JSONEachRow', rows.map((r) => r.key));
    },
    async insertLines(name, columns, body, keys) {
      if (keys.length > 0) await insert(name, body, 'TabSeparated', keys, columns);
    },
    exportRows(sql, params, format, settings) {
      const lane = laneOf(true);
      const name = statementName(sql);
      if (!conns.embedded) {
        return (async function* () {
          const { prepared, sized } = prepare(`${sql}\nFORMAT ${format}`, params);
          let stream: AsyncIterable<Buffer>;
          try {
            ({ stream } = await turn(lane, (c) => c.ch.exec({ ...prepared, clickhouse_settings: { ...withLane(c, lane), ...sized, ...settings } })));
          } catch (err) {
            throw clickhouseError(err, name);
          }
          yield* stream;
        })();
      }
      // Settings in the statement (as clickhouse_settings they would stay set for the session).
      const keys = Object.keys(settings);
      if (keys.some((k) => !/^[a-z0-9_]+$/.test(k))) throw new AppError('CLICKHOUSE_QUERY_FAILED', `not a setting name among ${keys.join(', ')}`, { retryable: false });
      const values = Object.fromEntries(keys.map((k, i) => [`export_setting_${i}`, String(settings[k])]));
      const clause = keys.map((k, i) => `${k} = {export_setting_${i}:String}`).join(', ');
      const extension = format === 'Parquet' ? 'parquet' : format === 'CSVWithNames' ? 'csv' : 'ndjson';
      return tailWrittenFile(parts.scratchDir, extension, async (path) => {
        // Rendered even on a door that binds: a table function's arguments and a SETTINGS clause
        // take literals, not query parameters.
        const query = renderStatement(`INSERT INTO FUNCTION file({export_path:String}, {export_format:String}) ${clause ? `SETTINGS ${clause} ` : ''}${sql}`, {
          db: database,
          ...params,
          ...values,
          export_path: path,
          export_format: format,
        });
        try {
          await turn(lane, (c) => c.ch.command({ query }));
        } catch (err) {
          throw clickhouseError(err, name);
        }
      });
    },
    ping: () => conns.ping(),
    lane: (lane, signal) => openDoor(signal ? { ...parts, signal } : parts, lane),
    gateState: () => conns.state(),
    close: () => conns.close(),
  };
}
