/**
 * Creates the ClickHouse client: HTTP to a server or cluster when CLICKHOUSE_URL is set,
 * otherwise embedded ClickHouse (chDB) in-process on TOOL_AUDIT_DATA_DIR. Either way every
 * query goes through @clickhouse/client.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';

export type { ClickHouseClient } from '@clickhouse/client';

/** Opens a client for the configured ClickHouse. The caller owns it and must close it. */
export async function createClickHouse(cfg: Config['clickhouse']): Promise<ClickHouseClient> {
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
  try {
    // Loaded lazily: a deployment against a ClickHouse server never needs the native engine.
    const { createChdbConnection } = await import('chdb/connection');
    // chdb builds against its own copy of @clickhouse/client-common; the shapes are identical.
    const connection = createChdbConnection({ path }) as unknown as NonNullable<Parameters<typeof createClient>[0]>['connection'];
    return createClient({ connection });
  } catch (err) {
    throw new AppError('CLICKHOUSE_UNAVAILABLE', `cannot open embedded ClickHouse at ${path}: ${(err as Error).message}`, {
      retryable: false,
      cause: err,
    });
  }
}
