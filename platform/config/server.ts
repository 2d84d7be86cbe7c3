/**
 * The API process's own settings: where it listens, who may call it (keys and their scopes), how
 * much each client may ask, the read queries' bounds, and where the CLI finds a running server.
 */
import { z } from 'zod';
import { intFromEnv, optionalString } from './env-values.ts';

/**
 * Scopes an API key may carry: `admin` changes configuration: tool manifests (PUT
 * /v1/manifests) and budgets (PUT /v1/budgets); `metrics` scrapes /metrics and nothing else (a
 * `read` key may scrape too), so a Prometheus holds no key to the data.
 */
export const API_SCOPES = ['ingest', 'read', 'admin', 'metrics'] as const;
export type ApiScope = (typeof API_SCOPES)[number];
/** One configured API key. */
export interface ApiKey {
  key: string;
  scopes: ApiScope[];
}

/** GET /v1/export's bounds by default (EXPORT_MAX_DAYS, EXPORT_CONCURRENCY_PER_CLIENT, EXPORT_CONCURRENCY). */
export const EXPORT_LIMIT_DEFAULTS = { maxDays: 93, perClient: 2, total: 4 } as const;

const apiKeys = z
  .string()
  .default('')
  .transform((raw, ctx) => {
    const keys: ApiKey[] = [];
    for (const entry of raw.split(/[;\n]/).map((s) => s.trim()).filter(Boolean)) {
      const [key, scopeList] = entry.split(':');
      const scopes = (scopeList ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (!key || key.length < 16 || scopes.length === 0 || scopes.some((s) => !(API_SCOPES as readonly string[]).includes(s))) {
        ctx.addIssue({
          code: 'custom',
          message: `TOOL_AUDIT_API_KEYS entry "${entry.slice(0, 8)}…" must be "<key of ≥16 chars>:<ingest|read|admin|metrics>[,…]"`,
        });
        return z.NEVER;
      }
      keys.push({ key, scopes: scopes as ApiScope[] });
    }
    return keys;
  });

/** The server section: listen address, keys, request limits, the read API and the CLI's server. */
export const serverSection = z
  .object({
    PORT: intFromEnv(8080),
    HOST: z.string().default('127.0.0.1'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    TOOL_AUDIT_API_KEYS: apiKeys,
    QUERY_MAX_EXECUTION_SECONDS: intFromEnv(30, 1),
    QUERY_MAX_RESULT_ROWS: intFromEnv(100_000, 1_001),
    QUERY_DEFAULT_WINDOW_DAYS: intFromEnv(90, 1),
    EXPENSIVE_THRESHOLD_USD: z.coerce.number().finite().min(0).default(1.0),
    SLOW_THRESHOLD_MS: intFromEnv(30_000, 0),
    DEDUP_INDEX_INTERVAL_MS: intFromEnv(10_000, 0),
    RATE_LIMIT_PER_MINUTE: intFromEnv(600, 0),
    RATE_LIMIT_BURST: intFromEnv(60, 1),
    EDGE_RATE_LIMIT_PER_MINUTE: intFromEnv(300_000, 0),
    EDGE_RATE_LIMIT_BURST: intFromEnv(10_000, 1),
    AUTH_FAILURES_PER_MINUTE: intFromEnv(30, 0),
    EXPORT_MAX_DAYS: intFromEnv(EXPORT_LIMIT_DEFAULTS.maxDays, 1),
    EXPORT_CONCURRENCY_PER_CLIENT: intFromEnv(EXPORT_LIMIT_DEFAULTS.perClient, 1),
    EXPORT_CONCURRENCY: intFromEnv(EXPORT_LIMIT_DEFAULTS.total, 1),
    TOOL_AUDIT_URL: optionalString.pipe(z.url().optional()),
    TOOL_AUDIT_API_KEY: optionalString,
  })
  .transform((e) => ({
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    apiKeys: e.TOOL_AUDIT_API_KEYS,
    /** The read API. */
    queries: {
      /** ClickHouse `max_execution_time` of every read query, seconds. */
      maxExecutionSeconds: e.QUERY_MAX_EXECUTION_SECONDS,
      /** ClickHouse `max_result_rows` of every read query (overflow throws). */
      maxResultRows: e.QUERY_MAX_RESULT_ROWS,
      /** `from` when a request gives none: this many days before now. */
      defaultWindowDays: e.QUERY_DEFAULT_WINDOW_DAYS,
      /** `expensive = cost_usd > this` on every invocation, and the default of /v1/calls/expensive. */
      expensiveThresholdUsd: e.EXPENSIVE_THRESHOLD_USD,
      /** Default threshold of /v1/calls/slow. */
      slowThresholdMs: e.SLOW_THRESHOLD_MS,
      /** How often `serve` refreshes the dedup index (dedup_repeats); 0 turns it off. */
      dedupIndexIntervalMs: e.DEDUP_INDEX_INTERVAL_MS,
    },
    /** Read requests per client (API key, else IP): a token bucket; perMinute 0 turns it off. */
    rateLimit: { perMinute: e.RATE_LIMIT_PER_MINUTE, burst: e.RATE_LIMIT_BURST },
    /** Every route, before authentication: requests per client, and failed authentications per address (api/edge-limits.ts); 0 per minute is off. */
    edgeLimits: { perMinute: e.EDGE_RATE_LIMIT_PER_MINUTE, burst: e.EDGE_RATE_LIMIT_BURST, authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE },
    /** GET /v1/export: the window's span in days, and exports running at once per client and in all. */
    exportLimits: { maxDays: e.EXPORT_MAX_DAYS, perClient: e.EXPORT_CONCURRENCY_PER_CLIENT, total: e.EXPORT_CONCURRENCY },
    /** Where the CLI finds a running server (`task`, `top`, `demo`), and the key it sends. */
    client: { url: e.TOOL_AUDIT_URL, apiKey: e.TOOL_AUDIT_API_KEY },
  }));

/** What {@link serverSection} gives the configuration. */
export type ServerConfig = z.output<typeof serverSection>;
