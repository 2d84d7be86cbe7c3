/**
 * The one door to ClickHouse: every statement and insert of tool-audit goes through it, so there
 * is one error map (what a failure means and whether a retry may help) and one rule for the
 * deduplication token of an insert. Stages take a {@link ClickHouseDoor}; none holds a client.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseError, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { AppError } from '../errors.ts';
import type { MetricsRegistry } from '../metrics.ts';
import type { LaneClients } from './client.ts';
import { exportRows } from './door-export.ts';
import { insertInto } from './door-insert.ts';
import { createSender, type DoorParts, type TextFormat } from './door-send.ts';
import { clickhouseError, statementName, tsvUnescape } from './error-map.ts';
import type { ExportFormatName } from './export-stream.ts';
import type { GateState, Lane } from './gate.ts';
import { laneConnections } from './lanes.ts';
import { parseLines } from './result-lines.ts';
import { settingsClause, type QuerySpec, type ReadLimits, type StatementRunner } from './statement.ts';

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

export { dedupToken } from './door-insert.ts';

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
 * Opens the door of `database` on a client, or on the clients of each lane (client.ts's
 * createLaneClients); the door then owns them: close() closes them.
 */
export function createClickHouseDoor(clients: ClickHouseClient | LaneClients, database: string, opts: DoorOptions = {}): ClickHouseDoor {
  const conns = laneConnections(clients, opts.agingMs ?? 2_000);
  const render = (opts.parameters ?? (conns.embedded ? 'render' : 'bind')) === 'render';
  const scratchDir = opts.scratchDir ?? join(tmpdir(), 'tool-audit-exports');
  return openDoor({ conns, database, render, jobSeconds: opts.jobMaxExecutionSeconds ?? 300, metrics: opts.metrics, scratchDir, parseEngineError: parseError }, undefined);
}

/** The one error guard: whatever fails under `run` leaves as the error map's AppError, named `what`. */
async function guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw clickhouseError(err, what);
  }
}

/** The door's methods over one sender: a lane's door (`lane()`) is another sender on the same parts. */
function openDoor(parts: DoorParts, fixed: Lane | undefined): ClickHouseDoor {
  const { conns, database } = parts;
  const sender = createSender(parts, fixed);
  const laneOf = (isRead: boolean): Lane => fixed ?? (isRead ? 'read' : 'ingest');
  const text = (sql: string, params: Record<string, unknown> | undefined, format: TextFormat, settings?: ClickHouseSettings) =>
    guarded(statementName(sql), () => sender.text(laneOf(false), sql, params, format, settings));
  return {
    database,
    async select<T>(sql: string, params?: Record<string, unknown>, settings?: ClickHouseSettings): Promise<T[]> {
      return parseLines(await text(sql, params, 'JSONEachRow', settings), (line) => JSON.parse(line) as T);
    },
    async selectFields(sql, params, settings) {
      return parseLines(await text(sql, params, 'TabSeparated', settings), (line) => line.split('\t').map(tsvUnescape));
    },
    async read(spec, params, ctx) {
      const started = performance.now();
      try {
        // Parsed inside the guard, as the client's json() was: an answer that cannot be read is the error map's too.
        const rows = await guarded(`query ${spec.name}`, async () =>
          parseLines(await sender.text(laneOf(true), spec.sql + settingsClause(ctx.limits, spec.settings), params, 'JSONEachRow'), (line) => JSON.parse(line) as never),
        );
        ctx.metrics?.observe('tool_audit_query_seconds', 'Read query latency (ClickHouse + decoding)', (performance.now() - started) / 1000, { query: spec.name });
        return rows;
      } catch (err) {
        const reason = err instanceof AppError && err.code === 'CLICKHOUSE_LIMIT_EXCEEDED' ? 'limit' : 'error';
        ctx.metrics?.inc('tool_audit_query_failures_total', 'Read queries that failed', { query: spec.name, reason });
        throw err;
      }
    },
    async command(sql, params, settings) {
      const lane = laneOf(false);
      await guarded(statementName(sql, 'statement'), () => {
        const { prepared, sized } = sender.prepare(sql, params);
        return sender.turn(lane, (c) => c.ch.command({ ...prepared, ...sender.settingsOf(c, lane, sized ? { ...sized, ...settings } : settings) }));
      });
    },
    async insertRows(name, rows) {
      if (rows.length === 0) return;
      await guarded(`insert into ${name}`, () => insertInto(sender, laneOf(false), { database, name, body: rows.map((r) => r.row), format: 'JSONEachRow', keys: rows.map((r) => r.key) }));
    },
    async insertLines(name, columns, body, keys) {
      if (keys.length === 0) return;
      await guarded(`insert into ${name}`, () => insertInto(sender, laneOf(false), { database, name, body, format: 'TabSeparated', keys, columns }));
    },
    exportRows: (sql, params, format, settings) => exportRows(parts, sender, laneOf(true), { sql, params, format, settings }),
    ping: () => conns.ping(),
    lane: (lane, signal) => openDoor(signal ? { ...parts, signal } : parts, lane),
    gateState: () => conns.state(),
    close: () => conns.close(),
  };
}
