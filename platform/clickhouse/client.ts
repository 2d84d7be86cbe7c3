/**
 * Creates the ClickHouse clients: HTTP to a server or cluster when CLICKHOUSE_URL is set,
 * otherwise embedded ClickHouse (chDB) in-process on TOOL_AUDIT_DATA_DIR. Either way every
 * query goes through @clickhouse/client.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';

export type { ClickHouseClient } from '@clickhouse/client';

/** Where a client connects: a server URL, or the embedded engine's data directory. */
export type ClientTarget = Pick<Config['clickhouse'], 'url' | 'user' | 'password' | 'database' | 'dataDir'>;

/**
 * The clients of each lane of work (gate.ts's lanes): the door sends a lane's statements to its
 * own clients. On a server one client serves every lane (the server runs statements side by
 * side and orders them by the priority the door sends); on the embedded engine each lane has
 * connections of its own, which chDB runs in parallel.
 */
export interface LaneClients {
  read: readonly ClickHouseClient[];
  ingest: readonly ClickHouseClient[];
  job: readonly ClickHouseClient[];
}

/** The longest statement the embedded engine parses: room for values rendered into it. */
const MAX_QUERY_BYTES = 256 * 1024 * 1024;

/**
 * Opens one client for the configured ClickHouse. The caller owns it and must close it.
 * `engineArgs` (embedded only) configure the in-process engine itself, e.g.
 * `--os_threads_nice_value_merge_mutate=19`: server settings, which chDB takes only from the
 * first connection the process opens on a directory (later ones' are ignored).
 */
export async function createClickHouse(cfg: ClientTarget, engineArgs: readonly string[] = []): Promise<ClickHouseClient> {
  if (cfg.url) {
    return createClient({
      url: cfg.url,
      username: cfg.user ?? 'default',
      password: cfg.password ?? '',
      request_timeout: 120_000,
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
  }
  const path = resolve(cfg.dataDir);
  mkdirSync(path, { recursive: true });
  let engine: { close(): void } | undefined;
  try {
    // Loaded lazily: a deployment against a ClickHouse server never needs the native engine.
    const { createChdbConnection } = await import('chdb/connection');
    const chdb = await import('chdb');
    // createChdbConnection cannot pass engine arguments: a session opened first with them starts
    // the engine so configured, and lives as long as this client.
    const started = engineArgs.length > 0 ? new chdb.Session(path, { connectionArgs: engineArgs }) : undefined;
    engine = started;
    // chdb builds against its own copy of @clickhouse/client-common; the shapes are identical.
    const connection = createChdbConnection({ path }) as unknown as NonNullable<Parameters<typeof createClient>[0]>['connection'];
    const client = createClient({ connection });
    const close = client.close.bind(client);
    client.close = async () => {
      await close();
      started?.close();
      // chDB defers a connection's teardown while any native operation of the process runs (one
      // whose promise settled early, a ping): closed is not yet released. The engine shuts down
      // when its last connection is released; one still held at process exit is destroyed from
      // the exit handlers, after other static state, which crashed the process (SIGSEGV).
      await chdb.drainPending();
    };
    // Values are rendered into the statement on this engine (literals.ts), so a statement is as
    // long as its values: the parser's 256 KiB default would refuse a large key look-up that a
    // bound statement passes. A session setting of this connection (chDB applies clickhouse_settings as SETs).
    await client.command({ query: 'SELECT 1', clickhouse_settings: { max_query_size: String(MAX_QUERY_BYTES) } });
    return client;
  } catch (err) {
    engine?.close();
    throw new AppError('CLICKHOUSE_UNAVAILABLE', `cannot open embedded ClickHouse at ${path}: ${(err as Error).message}`, {
      retryable: false,
      cause: err,
    });
  }
}

/**
 * Opens the clients of every lane: one shared client on a server; on the embedded engine
 * `readConnections` read, `ingestConnections` ingest and `jobConnections` job connections on the
 * same data directory, the job ones at OS priority `jobNice` (and `jobThreads` threads when set):
 * session settings of those connections alone; the engine's merges at `mergeNice`. The caller
 * owns them (the door closes them).
 */
export async function createLaneClients(cfg: Config['clickhouse']): Promise<LaneClients> {
  // Merges and mutations run on the engine's own threads, at normal priority unless told: on a
  // busy history they compete with reads as much as a job's statements would.
  const engineArgs = [`--os_threads_nice_value_merge_mutate=${cfg.mergeNice}`, ...(cfg.embeddedConfig ? [`--config-file=${resolve(cfg.embeddedConfig)}`] : [])];
  const first = await createClickHouse(cfg, engineArgs);
  if (cfg.url) return { read: [first], ingest: [first], job: [first] };
  const opened: ClickHouseClient[] = [first];
  try {
    /** `n` more connections, each with `settings` set for its session. */
    const open = async (n: number, settings?: ClickHouseSettings): Promise<ClickHouseClient[]> => {
      const out: ClickHouseClient[] = [];
      for (let i = 0; i < n; i++) {
        const c = await createClickHouse(cfg);
        opened.push(c);
        // chDB applies clickhouse_settings as SETs of the connection's session: they stay for its later statements.
        if (settings) await c.command({ query: 'SELECT 1', clickhouse_settings: settings });
        out.push(c);
      }
      return out;
    };
    const ingest = [first, ...(await open(cfg.ingestConnections - 1))];
    // The jobs' threads run at a lower OS priority (os_thread_priority is their nice value): a read
    // or an insert next to a job catching up gets the cores first, and with nothing else to do the
    // job still has them all.
    const job = await open(cfg.jobConnections, { os_thread_priority: String(cfg.jobNice), ...(cfg.jobThreads > 0 ? { max_threads: cfg.jobThreads } : {}) });
    const read = await open(cfg.readConnections);
    return { read, ingest, job };
  } catch (err) {
    await Promise.allSettled(opened.map((c) => c.close()));
    throw err instanceof AppError ? err : new AppError('CLICKHOUSE_UNAVAILABLE', `cannot open embedded ClickHouse connections: ${(err as Error).message}`, { retryable: false, cause: err });
  }
}
