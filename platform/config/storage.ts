/**
 * Where the data lives and how long: the ClickHouse target (a server, or the embedded engine and
 * its connections), retention per table, migrations at start, and the process's watchdog.
 */
import { z } from 'zod';
import { flag, intFromEnv, optionalString, SHARED_VARIABLES } from './env-values.ts';

/** The storage section. */
export const storageSection = z
  .object({
    CLICKHOUSE_URL: optionalString.pipe(z.url().optional()),
    CLICKHOUSE_USER: optionalString,
    CLICKHOUSE_PASSWORD: optionalString,
    CLICKHOUSE_DATABASE: SHARED_VARIABLES.CLICKHOUSE_DATABASE,
    TOOL_AUDIT_DATA_DIR: SHARED_VARIABLES.TOOL_AUDIT_DATA_DIR,
    CLICKHOUSE_READ_CONNECTIONS: intFromEnv(2, 1),
    CLICKHOUSE_INGEST_CONNECTIONS: intFromEnv(2, 1),
    CLICKHOUSE_JOB_CONNECTIONS: intFromEnv(2, 1),
    CLICKHOUSE_JOB_THREADS: intFromEnv(0, 0),
    CLICKHOUSE_JOB_NICE: intFromEnv(19, 0).pipe(z.number().max(19)),
    CLICKHOUSE_MERGE_NICE: intFromEnv(19, 0).pipe(z.number().max(19)),
    CLICKHOUSE_EMBEDDED_CONFIG: optionalString,
    RETENTION_INVOCATIONS_DAYS: intFromEnv(90, 1),
    RETENTION_OUTPUTS_DAYS: intFromEnv(30, 1),
    RETENTION_WORKFLOWS_DAYS: intFromEnv(30, 1),
    RETENTION_QUARANTINE_DAYS: intFromEnv(90, 1),
    MIGRATE_ON_START: flag(true),
    WATCHDOG_TIMEOUT_MS: intFromEnv(10_000, 0),
  })
  .transform((e) => ({
    clickhouse: {
      url: e.CLICKHOUSE_URL,
      user: e.CLICKHOUSE_USER,
      password: e.CLICKHOUSE_PASSWORD,
      database: e.CLICKHOUSE_DATABASE,
      dataDir: e.TOOL_AUDIT_DATA_DIR,
      /** Embedded engine: connections serving API reads side by side. */
      readConnections: e.CLICKHOUSE_READ_CONNECTIONS,
      /** Embedded engine: connections of ingest (look-ups and inserts beside the key filter's load). */
      ingestConnections: e.CLICKHOUSE_INGEST_CONNECTIONS,
      /** Embedded engine: connections of the background jobs. */
      jobConnections: e.CLICKHOUSE_JOB_CONNECTIONS,
      /** Embedded engine: `max_threads` of each job connection (0 = the engine's default). */
      jobThreads: e.CLICKHOUSE_JOB_THREADS,
      /** Embedded engine: the OS priority (nice, 0–19) of the job connections' threads, so reads and ingest go first. */
      jobNice: e.CLICKHOUSE_JOB_NICE,
      /** Embedded engine: the OS priority (nice, 0–19) of the engine's background merge and mutation threads. */
      mergeNice: e.CLICKHOUSE_MERGE_NICE,
      /** Embedded engine: a ClickHouse server configuration file it starts with (users and grants, server settings). */
      embeddedConfig: e.CLICKHOUSE_EMBEDDED_CONFIG,
    },
    retentionDays: {
      invocations: e.RETENTION_INVOCATIONS_DAYS,
      outputs: e.RETENTION_OUTPUTS_DAYS,
      workflows: e.RETENTION_WORKFLOWS_DAYS,
      quarantine: e.RETENTION_QUARANTINE_DAYS,
    },
    /** Apply migrations at start (off for processes whose ClickHouse user may not run DDL). */
    migrateOnStart: e.MIGRATE_ON_START,
    /** A long-running process ends itself (SIGKILL) when its main thread is silent this long; 0 = off (platform/watchdog.ts). */
    watchdogMs: e.WATCHDOG_TIMEOUT_MS,
  }));

/** What {@link storageSection} gives the configuration. */
export type StorageConfig = z.output<typeof storageSection>;
