/**
 * How the door sends one statement: its values rendered or bound, its settings per connection
 * and lane, and its turn at the lane's connections, timed. The door's methods (door.ts) are
 * built on {@link createSender}; nothing here knows what a statement is for.
 */
import type { ClickHouseSettings } from '@clickhouse/client';
import { AppError, errorMessage } from '../errors.ts';
import type { MetricsRegistry } from '../metrics.ts';
import type { Lane } from './gate.ts';
import type { Connection, LaneConnections, RawQuery } from './lanes.ts';
import { isKeySet, literalOf, renderStatement } from './literals.ts';

/** What a door is opened with; a lane's door shares it, with its own signal. */
export interface DoorParts {
  signal?: AbortSignal | undefined;
  metrics?: MetricsRegistry | undefined;
  conns: LaneConnections;
  database: string;
  render: boolean;
  jobSeconds: number;
  scratchDir: string;
  /**
   * An engine's error text as the client reads it (its `parseError`, given by door.ts: only the
   * door module loads the client): chDB's own calls fail with its raw text.
   */
  parseEngineError: (message: string) => Error;
}

/** The statement text and parameters as sent: values rendered into the text, or bound. */
export type Prepared = { query: string; query_params?: Record<string, unknown> };

const KEY_SET_NAMES = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*KeySet\(/g;

/**
 * Room for a statement as sent, when its rendered values (key sets above all) may outgrow the
 * default max_query_size (256 KiB; a UTF-16 unit is at most 3 bytes of UTF-8, so below 80,000 units
 * it fits): three bytes a unit, at least 4 MB. Undefined for a statement that fits.
 */
function sizedFor(query: string): ClickHouseSettings | undefined {
  return query.length < 80_000 ? undefined : { max_query_size: String(Math.max(4_000_000, 3 * query.length + 1000)) };
}

/**
 * The statement as sent, and the settings its key sets need (literals.ts: always rendered);
 * `{db:Identifier}` is `database` unless the params name it.
 */
export function prepareStatement(database: string, render: boolean, query: string, params: Record<string, unknown> = {}): { prepared: Prepared; sized?: ClickHouseSettings | undefined } {
  const all = 'db' in params ? params : { db: database, ...params };
  if (render) {
    const rendered = renderStatement(query, all);
    return { prepared: { query: rendered }, sized: sizedFor(rendered) };
  }
  // Bound values, but key sets rendered (literals.ts says why) and left out of the parameters.
  const keySets = new Set([...query.matchAll(KEY_SET_NAMES)].map((m) => m[1] as string));
  if (!keySets.size) return { prepared: { query, query_params: all } };
  const rendered = renderStatement(query, all, isKeySet);
  const bound = Object.fromEntries(Object.entries(all).filter(([k]) => !keySets.has(k)));
  return { prepared: { query: rendered, query_params: bound }, sized: sizedFor(rendered) };
}

/**
 * Per-lane settings sent to a ClickHouse server, where statements run concurrently: its own
 * `priority` (1 is the most urgent; a lower-priority query is paused while a higher one runs)
 * and a time bound on jobs, whose statements are slices meant to be short.
 */
function serverSettings(lane: Lane, jobSeconds: number): ClickHouseSettings {
  return lane === 'read' ? { priority: '1' } : lane === 'ingest' ? { priority: '2' } : { priority: '3', max_execution_time: jobSeconds };
}

/** The formats a door reads an answer in, as text. */
export type TextFormat = 'JSONEachRow' | 'TabSeparated';

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A statement as chDB's connection would run it for the client (chdb-connection.js): each setting
 * a `SET` before it, the format after it (the client's own rule: trimmed, trailing semicolons
 * dropped). Settings so applied stay set for the connection's later statements, as through the
 * client.
 */
export function rawStatement(query: string, format: TextFormat, settings: ClickHouseSettings | undefined): string {
  const sets: string[] = [];
  for (const [name, value] of Object.entries(settings ?? {})) {
    if (value === undefined) continue;
    if (!SETTING_NAME.test(name)) throw new AppError('INTERNAL', `a statement's setting has an invalid name: ${JSON.stringify(name)}`, { retryable: false });
    const literal = typeof value === 'number' ? String(value) : typeof value === 'boolean' ? (value ? '1' : '0') : literalOf('String', String(value));
    sets.push(`SET ${name} = ${literal}; `);
  }
  return `${sets.join('')}${query.trim().replace(/;+$/, '')} \nFORMAT ${format}`;
}

/**
 * The answer of `sql` through chDB's own call; a failure reads as through the client (chdb-connection.js
 * parses chDB's `Code: N. DB::Exception: … (TYPE)` text the same way), so messages and codes do not
 * depend on the path.
 */
async function rawText(query: RawQuery, sql: string, parseError: DoorParts['parseEngineError']): Promise<string> {
  try {
    return (await query(sql)).text();
  } catch (err) {
    const parsed = parseError(errorMessage(err));
    if (parsed !== err) (parsed as Error & { cause?: unknown }).cause = err;
    throw parsed;
  }
}

/** What the door's methods send with. */
export interface Sender {
  /** The statement as sent (see {@link prepareStatement}). */
  prepare(query: string, params?: Record<string, unknown>): { prepared: Prepared; sized?: ClickHouseSettings | undefined };
  /** A statement's settings on a connection: on an embedded one only the caller's, on a server the lane's too. */
  withLane(c: Connection, lane: Lane, settings?: ClickHouseSettings): ClickHouseSettings | undefined;
  /** {@link withLane} as the client's `clickhouse_settings` option (none when empty). */
  settingsOf(c: Connection, lane: Lane, settings?: ClickHouseSettings): { clickhouse_settings?: ClickHouseSettings };
  /** Runs `send` in its turn on a connection of `lane`; the result is read after the turn (chDB has materialized it). */
  turn<T>(lane: Lane, send: (c: Connection) => Promise<T>): Promise<T>;
  /**
   * Runs a SELECT in its turn on `lane` and returns its answer in `format` as text. On an
   * embedded connection a rendered statement goes straight to chDB, without the client's stream
   * over the bytes chDB has already materialized: ~0.3 ms less a small statement and 12 % less a
   * large answer, measured on a 10 M-call database (docs/benchmarks.md, the audit log's section).
   */
  text(lane: Lane, query: string, params: Record<string, unknown> | undefined, format: TextFormat, settings?: ClickHouseSettings): Promise<string>;
}

/** The sender of a door's statements: `SHUTTING_DOWN` once the door's signal is aborted. */
export function createSender(parts: DoorParts, fixed: Lane | undefined): Sender {
  // chDB applies clickhouse_settings session-wide (see door-insert.ts): an embedded connection
  // gets only the caller's settings, never the lane's.
  const withLane = (c: Connection, lane: Lane, settings?: ClickHouseSettings): ClickHouseSettings | undefined =>
    c.gate ? settings : { ...serverSettings(lane, parts.jobSeconds), ...settings };
  const open = (): void => {
    if (parts.signal?.aborted) throw new AppError('SHUTTING_DOWN', `the ${fixed ?? 'door'} statements of ${parts.database} are stopped`, { retryable: false });
  };
  const prepare: Sender['prepare'] = (query, params) => prepareStatement(parts.database, parts.render, query, params);
  const settingsOf: Sender['settingsOf'] = (c, lane, settings) => {
    const merged = withLane(c, lane, settings);
    return merged && Object.keys(merged).length > 0 ? { clickhouse_settings: merged } : {};
  };
  const turn: Sender['turn'] = async (lane, send) => {
    open();
    const asked = performance.now();
    let began = asked;
    try {
      // Checked again when its turn comes: it may have waited behind other statements meanwhile.
      return await parts.conns.run(lane, send, () => {
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
  const text: Sender['text'] = (lane, query, params, format, settings) => {
    const { prepared, sized } = prepare(query, params);
    const all = sized ? { ...sized, ...settings } : settings;
    return turn(lane, async (c) => {
      // Bound values need the client's parameter path; rendered ones (the embedded default) do not.
      if (c.rawQuery && prepared.query_params === undefined) return rawText(c.rawQuery, rawStatement(prepared.query, format, withLane(c, lane, all)), parts.parseEngineError);
      return (await c.ch.query({ ...prepared, format, ...settingsOf(c, lane, all) })).text();
    });
  };
  return { prepare, withLane, settingsOf, turn, text };
}
