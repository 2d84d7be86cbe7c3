/**
 * Which connection runs a statement. The embedded engine (chDB) runs one statement at
 * a time per connection but separate connections side by side, so each lane of work (gate.ts) has
 * connections of its own (client.ts's LaneClients): a read never waits for a job's or ingest's
 * statement. Each embedded connection keeps a gate: when lanes share a connection (a door on one
 * client, as tests and benchmarks open it) the gate still orders them reads first; when a lane
 * has several connections a statement takes the least busy one. A server schedules concurrent
 * statements itself: no gate.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { AppError, errorMessage } from '../errors.ts';
import type { LaneClients } from './client.ts';
import { StatementGate, type GateState, type Lane } from './gate.ts';

/** chDB's insert of a Buffer body with its settings in the INSERT statement (see door.ts). */
export type RawInsert = (p: { table: string; values: Buffer; format: 'TabSeparated' | 'JSONEachRow'; columns?: readonly string[]; settings: Record<string, string | number> }) => Promise<unknown>;

/** chDB's statement answered as one materialized result, without the client's stream and parser (see door-send.ts). */
export type RawQuery = (sql: string) => Promise<{ text(): string }>;

/** One client with what the door needs to know of it. */
export interface Connection {
  ch: ClickHouseClient;
  /** chDB's raw insert: present exactly when the client is an embedded connection. */
  rawInsert: RawInsert | undefined;
  /** chDB's raw query: present exactly when the client is an embedded connection. */
  rawQuery: RawQuery | undefined;
  /** Orders the statements of an embedded connection; none on a server. */
  gate: StatementGate | undefined;
}

/** The connections of every lane of a door. */
export interface LaneConnections {
  /** True on the embedded engine (values are rendered into statements there, see literals.ts). */
  readonly embedded: boolean;
  /** Runs `send` on a connection of `lane` when its turn there comes. */
  run<T>(lane: Lane, send: (c: Connection) => Promise<T>, started?: () => void): Promise<T>;
  /** Statements running and waiting at the gates; null on a server. */
  state(): GateState | null;
  /** Whether ClickHouse answers (a read connection, never queued at a gate). */
  ping(): Promise<{ ok: boolean; detail?: string }>;
  /** Waits for every statement and ping in flight, then closes every client. */
  close(): Promise<void>;
}

/** chDB's escape hatches, found by feature detection on the client's connection: only chDB's has them. */
function chdbExtension(ch: ClickHouseClient): { rawInsert: RawInsert | undefined; rawQuery: RawQuery | undefined } {
  const ext = (ch as unknown as { connection?: { chdb?: { rawInsert?: unknown; queryAsync?: unknown } } }).connection?.chdb;
  const insert = ext?.rawInsert;
  const query = ext?.queryAsync;
  return {
    rawInsert: typeof insert === 'function' ? (insert as RawInsert) : undefined,
    rawQuery: typeof query === 'function' ? (query as RawQuery) : undefined,
  };
}

// One gate per embedded client, whichever doors (databases) share it: the connection runs one
// statement at a time, and the gate decides which goes next.
const gates = new WeakMap<ClickHouseClient, StatementGate>();

function connectionOf(ch: ClickHouseClient, agingMs: number): Connection {
  const { rawInsert, rawQuery } = chdbExtension(ch);
  let gate = gates.get(ch);
  if (rawInsert && !gate) gates.set(ch, (gate = new StatementGate(1, agingMs)));
  return { ch, rawInsert, rawQuery, gate };
}

const load = (c: Connection): number => {
  const s = c.gate?.state();
  return s ? s.running + s.waiting.read + s.waiting.ingest + s.waiting.job : 0;
};

/** The connections of `clients` (one client: every lane on it). */
export function laneConnections(clients: ClickHouseClient | LaneClients, agingMs: number): LaneConnections {
  const one = clients as ClickHouseClient;
  const lanes: LaneClients = 'read' in clients && Array.isArray(clients.read) ? (clients as LaneClients) : { read: [one], ingest: [one], job: [one] };
  if (lanes.read.length === 0 || lanes.ingest.length === 0 || lanes.job.length === 0) throw new AppError('INTERNAL', 'a door needs a client in every lane', { retryable: false });
  const byLane: Record<Lane, Connection[]> = {
    read: lanes.read.map((c) => connectionOf(c, agingMs)),
    ingest: lanes.ingest.map((c) => connectionOf(c, agingMs)),
    job: lanes.job.map((c) => connectionOf(c, agingMs)),
  };
  const all = [...new Set([...byLane.read, ...byLane.ingest, ...byLane.job].map((c) => c.ch))].map((ch) => connectionOf(ch, agingMs));
  const embedded = all.every((c) => c.rawInsert !== undefined);
  // Every statement and ping sent and not yet answered: close() waits for them (see there).
  const inflight = new Set<Promise<unknown>>();
  const tracked = <T>(p: Promise<T>): Promise<T> => {
    inflight.add(p);
    const done = () => inflight.delete(p);
    p.then(done, done);
    return p;
  };
  // A lane of several connections hands a statement the first connection that is free, not the
  // least busy one when it was sent: bound at once, an insert waited behind a 140 ms insert on one
  // connection while the other connection had finished (measured in a commit round's inserts).
  const waiters: Record<Lane, Array<() => void>> = { read: [], ingest: [], job: [] };
  // Taken synchronously (no await before the gate): two statements sent in one tick must not both
  // see the same connection idle.
  const idleNow = (lane: Lane): Connection | undefined => {
    const candidates = byLane[lane];
    if (candidates.length === 1) return candidates[0] as Connection;
    return waiters[lane].length === 0 ? candidates.find((c) => load(c) === 0) : undefined;
  };
  const whenOneFrees = async (lane: Lane): Promise<Connection> => {
    await new Promise<void>((resolve) => waiters[lane].push(resolve));
    // Woken when one of the lane's connections finished a statement; another statement may have
    // taken it meanwhile: then the least busy one, in its gate's order.
    const candidates = byLane[lane];
    return candidates.find((c) => load(c) === 0) ?? candidates.reduce((a, b) => (load(b) < load(a) ? b : a));
  };
  const wake = (c: Connection) => {
    for (const lane of ['read', 'ingest', 'job'] as const) if (byLane[lane].some((x) => x.ch === c.ch)) waiters[lane].shift()?.();
  };
  return {
    embedded,
    // async: a statement refused at its turn (open() throws in `started`) on a connection without a
    // gate throws synchronously inside go(); async makes that a rejection, as every other failure.
    async run(lane, send, started) {
      const c = idleNow(lane) ?? (await whenOneFrees(lane));
      const go = () => {
        started?.();
        return send(c);
      };
      const p = tracked(c.gate ? c.gate.run(lane, go) : go());
      const freed = () => wake(c);
      p.then(freed, freed);
      return p;
    },
    state() {
      const states = all.flatMap((c) => (c.gate ? [c.gate.state()] : []));
      if (states.length === 0) return null;
      const sum = (f: (s: GateState) => number) => states.reduce((n, s) => n + f(s), 0);
      return { running: sum((s) => s.running), waiting: { read: sum((s) => s.waiting.read), ingest: sum((s) => s.waiting.ingest), job: sum((s) => s.waiting.job) } };
    },
    async ping() {
      try {
        const r = await tracked((byLane.read[0] as Connection).ch.ping());
        return r.success ? { ok: true } : { ok: false, detail: errorMessage(r.error) };
      } catch (err) {
        return { ok: false, detail: errorMessage(err) };
      }
    },
    close: async () => {
      // A connection closed under a running statement is torn down only once the statement ends,
      // after close() has returned: a process that exits then takes the engine down from its exit
      // handlers, which crashed it (SIGSEGV) about one stop in twenty. No statement can be
      // interrupted, so close waits for every one in flight, queued ones included.
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
      await Promise.all(all.map((c) => c.ch.close()));
    },
  };
}
