/**
 * Shared start-up of every command: configuration (fail fast with a clear message), logger,
 * ClickHouse with the schema migrated, and signal handling for a clean shutdown.
 */
import { loadConfig, type Config } from '../platform/config.ts';
import { createClickHouse } from '../platform/clickhouse/client.ts';
import { createClickHouseDoor, type ClickHouseDoor } from '../platform/clickhouse/door.ts';
import { migrate } from '../platform/clickhouse/migrate.ts';
import { createLogger, type Logger } from '../platform/logger.ts';

/** What every long-running command starts with. */
export interface Runtime {
  config: Config;
  logger: Logger;
  /** The one door to ClickHouse, on the configured database. */
  clickhouse: ClickHouseDoor;
}

/** Parses the environment or exits with status 2 and the list of bad variables. */
export function configOrExit(): Config {
  const result = loadConfig();
  if (!result.ok) {
    process.stderr.write(`tool-audit: ${result.error}\n`);
    process.exit(2);
  }
  return result.config;
}

/** Opens the ClickHouse door of the configured database (the caller closes it). */
export async function openClickHouse(config: Config): Promise<ClickHouseDoor> {
  return createClickHouseDoor(await createClickHouse(config.clickhouse), config.clickhouse.database);
}

/** Opens ClickHouse and applies migrations. */
export async function startRuntime(name: string): Promise<Runtime> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel, name);
  const clickhouse = await openClickHouse(config);
  if (config.migrateOnStart) {
    const result = await migrate(clickhouse, { retentionDays: config.retentionDays });
    if (result.applied.length) logger.info({ applied: result.applied }, 'migrations applied');
  }
  return { config, logger, clickhouse };
}

/** Runs `stop` once on the first SIGINT/SIGTERM, then exits; a second signal exits at once. */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}
