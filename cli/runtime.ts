/**
 * Shared start-up of every command: configuration (fail fast with a clear message), logger,
 * ClickHouse with the schema migrated, and signal handling for a clean shutdown.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig, type Config, type LoadOptions } from '../platform/config.ts';
import { createLaneClients } from '../platform/clickhouse/client.ts';
import { createClickHouseDoor, type ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { migrate } from '../platform/clickhouse/migrate.ts';
import { removeReplacedParts } from '../platform/clickhouse/part-cleanup.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import type { RedactionPolicy } from '../schemas/redaction-policy.ts';
import { resolveRedaction } from './redaction-key.ts';
import { MetricsRegistry } from '../platform/metrics.ts';
import { startWatchdog } from '../platform/watchdog.ts';
import { watchEventLoop } from '../platform/event-loop.ts';

/** What every long-running command starts with. */
export interface Runtime {
  config: Config;
  logger: Logger;
  /** The one door to ClickHouse, on the configured database. */
  clickhouse: ClickHouseDoor;
  /** The process's metrics (the door records its statements' waits and run times there). */
  metrics: MetricsRegistry;
  /** What ingest takes out of every row before writing it (REDACTION=off: undefined). */
  redaction: RedactionPolicy | undefined;
}

/** Parses the environment or exits with status 2 and the list of bad variables. */
export function configOrExit(opts: LoadOptions = {}): Config {
  const result = loadConfig(undefined, opts);
  if (!result.ok) {
    process.stderr.write(`tool-audit: ${result.error}\n`);
    process.exit(2);
  }
  return result.config;
}

/**
 * Opens the ClickHouse door of the configured database, a connection per lane (the caller closes it). Its close() first
 * lets embedded ClickHouse remove the parts merges replaced (part-cleanup.ts): an exiting
 * process would leave them in the data directory.
 */
export async function openClickHouse(config: Config, metrics?: MetricsRegistry): Promise<ClickHouseDoor> {
  // Exports are written here while they are read (embedded ClickHouse): beside the data, not in a
  // temporary folder that may be memory; one process opens a data directory, so what is here at
  // start is left from a process that died mid-export.
  const scratchDir = join(config.clickhouse.dataDir, 'tool-audit-state', 'exports');
  if (!config.clickhouse.url) rmSync(scratchDir, { recursive: true, force: true });
  const door = createClickHouseDoor(await createLaneClients(config.clickhouse), config.clickhouse.database, { scratchDir, ...(metrics ? { metrics } : {}) });
  const close = async (): Promise<void> => {
    try {
      await removeReplacedParts(door);
    } finally {
      await door.close();
    }
  };
  return { ...door, close };
}

/** Checks the whole configuration, then opens ClickHouse and applies migrations. */
export async function startRuntime(name: string, opts: LoadOptions = {}): Promise<Runtime> {
  const config = configOrExit(opts);
  const logger = createLogger(config.logLevel, name);
  // Before ClickHouse opens: from then on a fatal error would leave the process hanging (watchdog.ts).
  startWatchdog({ timeoutMs: config.watchdogMs, name });
  const metrics = new MetricsRegistry();
  watchEventLoop(metrics);
  // Before ClickHouse opens too: an unreadable key file stops the start before anything is written.
  const redaction = await resolveRedaction(config);
  const clickhouse = await openClickHouse(config, metrics);
  if (config.migrateOnStart) {
    const result = await migrate(clickhouse, { retentionDays: config.retentionDays });
    if (result.applied.length) logger.info({ applied: result.applied }, 'migrations applied');
  }
  return { config, logger, clickhouse, metrics, redaction };
}

/**
 * How long after the first signal a repeat still counts as the same request. One stop request
 * can reach the server twice a few milliseconds apart: under `npm start` a Ctrl-C goes to the
 * whole foreground process group (npm and the server) and npm forwards its copy too; systemd's
 * default KillMode signals every process of the unit, npm included, which forwards again.
 */
export const REPEAT_SIGNAL_GRACE_MS = 1_000;

/**
 * The signal handler behind {@link onShutdown}, apart from `process` so it can be tested: runs
 * `stop` once, then `exit(0)` (or `exit(1)` if it failed); a later signal exits at once with 1.
 */
export function shutdownHandler(
  logger: Logger,
  stop: () => Promise<void>,
  exit: (code: number) => void,
  now: () => number = Date.now,
): (signal: string) => void {
  let firstAt: number | undefined;
  return (signal) => {
    if (firstAt !== undefined) {
      if (now() - firstAt < REPEAT_SIGNAL_GRACE_MS) {
        logger.debug({ signal }, 'repeated stop signal ignored: already shutting down');
        return;
      }
      logger.warn({ signal }, 'second stop signal: exiting without finishing shutdown');
      exit(1);
      return;
    }
    firstAt = now();
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
}

/**
 * Runs `stop` once on the first SIGINT/SIGTERM, then exits; a second signal exits at once,
 * unless it comes within {@link REPEAT_SIGNAL_GRACE_MS} of the first (the same request twice).
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  const handler = shutdownHandler(logger, stop, (code) => process.exit(code));
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}
