/**
 * The one place that reads the environment. Every other module receives a {@link Config}
 * (or a slice of it) as a dependency, so tests build configs without touching process.env.
 */
import { defaultSecretLines, dualScopeLines, modeOf } from './default-secrets.ts';
import { z } from 'zod';

/** GET /v1/export's bounds by default (EXPORT_MAX_DAYS, EXPORT_CONCURRENCY_PER_CLIENT, EXPORT_CONCURRENCY). */
export const EXPORT_LIMIT_DEFAULTS = { maxDays: 93, perClient: 2, total: 4 } as const;

const intFromEnv = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);
const flag = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(def ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const apiKeysSchema = z
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

/** A JSON value from one variable, checked by `schema`; the variable's name in every message. */
const jsonFromEnv = <T extends z.ZodType>(name: string, schema: T) =>
  z
    .string()
    .optional()
    .transform((raw, ctx): z.infer<T> | undefined => {
      if (raw === undefined || raw.trim() === '') return undefined;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `${name} is not JSON: ${(err as Error).message}` });
        return z.NEVER;
      }
      const r = schema.safeParse(value);
      if (r.success) return r.data as z.infer<T>;
      ctx.addIssue({ code: 'custom', message: `${name}: ${r.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ')}` });
      return z.NEVER;
    });

const redactionPathsSchema = z.record(z.string().min(1), z.array(z.string().regex(/^(args|result_summary)(\.[^.]+)+$/, 'a path starts with args. or result_summary.')));
const redactionPatternsSchema = z.array(
  z
    .object({ rule: z.string().regex(/^[a-z0-9_]{1,40}$/, 'a rule is lower-case letters, digits and _'), pattern: z.string().min(1), flags: z.string().regex(/^[imsu]*$/).optional() })
    .refine((p) => {
      try {
        new RegExp(p.pattern, p.flags);
        return true;
      } catch {
        return false;
      }
    }, 'pattern is not a valid regular expression'),
);

/**
 * Scopes an API key may carry (SPEC §7): `admin` changes configuration: tool manifests (PUT
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

const envSchema = z.object({
  PORT: intFromEnv(8080),
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TOOL_AUDIT_API_KEYS: apiKeysSchema,

  CLICKHOUSE_URL: optionalString.pipe(z.url().optional()),
  CLICKHOUSE_USER: optionalString,
  CLICKHOUSE_PASSWORD: optionalString,
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'must be a plain identifier').default('tool_audit'),
  TOOL_AUDIT_DATA_DIR: z.string().default('./data'),
  CLICKHOUSE_READ_CONNECTIONS: intFromEnv(2, 1),
  CLICKHOUSE_INGEST_CONNECTIONS: intFromEnv(2, 1),
  CLICKHOUSE_JOB_CONNECTIONS: intFromEnv(2, 1),
  CLICKHOUSE_JOB_THREADS: intFromEnv(0, 0),
  CLICKHOUSE_JOB_NICE: intFromEnv(19, 0).pipe(z.number().max(19)),
  CLICKHOUSE_MERGE_NICE: intFromEnv(19, 0).pipe(z.number().max(19)),
  CLICKHOUSE_EMBEDDED_CONFIG: optionalString,

  KAFKA_BROKERS: optionalString,
  KAFKA_TOPIC: z.string().min(1).default('tool_audit.packets'),
  KAFKA_DLQ_TOPIC: z.string().min(1).default('tool_audit.packets.dlq'),
  KAFKA_GROUP_ID: z.string().min(1).default('tool-audit-ingest'),
  KAFKA_CLIENT_ID: z.string().min(1).default('tool-audit'),
  KAFKA_TOPIC_PARTITIONS: intFromEnv(6, 1),
  KAFKA_SESSION_TIMEOUT_MS: intFromEnv(30_000, 6_000),
  INGEST_PARTITIONS_CONCURRENCY: intFromEnv(3, 1),
  INGEST_CONSUMERS: intFromEnv(2, 1),
  INGEST_DECODE_THREADS: intFromEnv(1, 0),
  AUDIT_LOG: z.enum(['on', 'off']).default('on'),
  AUDIT_LOG_SIGNING_KEY: optionalString,
  AUDIT_LOG_DIR: optionalString,
  AUDIT_LOG_ORIGIN: optionalString.pipe(z.string().regex(/^[^\s+]+$/, 'must be one word without spaces or "+" (a note key name)').optional()),
  AUDIT_LOG_WITNESS_URLS: optionalString.pipe(
    z
      .string()
      .transform((s) => s.split(',').map((u) => u.trim()).filter(Boolean))
      .pipe(z.array(z.url({ protocol: /^https?$/ })))
      .optional(),
  ),
  AUDIT_LOG_HEAD_INTERVAL_MS: intFromEnv(60_000, 100),
  AUDIT_LOG_GRACE_MS: intFromEnv(60_000, 0),
  REDACTION: z.enum(['on', 'off']).default('on'),
  REDACTION_KEY: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  REDACTION_EMAIL: flag(false),
  REDACTION_PATHS: jsonFromEnv('REDACTION_PATHS', redactionPathsSchema),
  REDACTION_PATTERNS: jsonFromEnv('REDACTION_PATTERNS', redactionPatternsSchema),

  RETENTION_INVOCATIONS_DAYS: intFromEnv(90, 1),
  RETENTION_OUTPUTS_DAYS: intFromEnv(30, 1),
  RETENTION_WORKFLOWS_DAYS: intFromEnv(30, 1),
  RETENTION_QUARANTINE_DAYS: intFromEnv(90, 1),

  MAX_BODY_BYTES: intFromEnv(16 * 1024 * 1024, 1024),
  MAX_PACKET_BYTES: intFromEnv(1024 * 1024, 256),
  INGEST_BATCH_MAX_PACKETS: intFromEnv(5000, 1),
  INGEST_FLUSH_MS: intFromEnv(200, 1).pipe(z.number().max(10_000)),
  INGEST_SINK_RETRY_MAX_MS: intFromEnv(10_000, 10),
  INGEST_SINK_UNHEALTHY_AFTER_MS: intFromEnv(60_000, 100),
  INGEST_CHUNK_MAX_ATTEMPTS: intFromEnv(5, 1).pipe(z.number().max(1000)),
  DEDUP_CACHE_ENTRIES: intFromEnv(1_000_000, 0),
  INGEST_KEY_FILTER_MB: intFromEnv(256, 1),
  INGEST_KEY_SNAPSHOT_DIR: optionalString,
  INGEST_KEY_SNAPSHOT_MS: intFromEnv(600_000, 0),

  DEPENDENCY_WINDOW_MS: intFromEnv(60_000, 1),
  AUDIT_GRACE_MS: intFromEnv(300_000, 0),
  ANALYZER_OVERLAP_MS: intFromEnv(30_000, 0),
  ANALYZER_INTERVAL_MS: intFromEnv(1_000, 50),
  AUDIT_INTERVAL_MS: intFromEnv(10_000, 50),
  ANALYZER_ENABLED: flag(true),
  INGEST_WORKER_IN_PROCESS: flag(true),
  MIGRATE_ON_START: flag(true),
  WATCHDOG_TIMEOUT_MS: intFromEnv(10_000, 0),

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

  BUDGET_RESERVATION_TIMEOUT_MS: z.coerce.number().int().min(1).max(86_400_000).default(300_000),
  BUDGET_DECISIONS_FLUSH_MS: z.coerce.number().int().min(1).max(60_000).default(200),
  BUDGET_CHECK_PORT: optionalString.pipe(z.coerce.number<string | undefined>().int().min(0).max(65_535).optional()),

  HINTS_INTERVAL_MS: intFromEnv(3_600_000, 0),
  HINTS_WINDOW_MS: intFromEnv(86_400_000, 60_000),
  HINTS_CACHE_MIN_SHARE: z.coerce.number().finite().min(0).max(1).default(0.2),
  HINTS_BUNDLE_MIN_COUNT: intFromEnv(5, 2),
  HINTS_BUNDLE_MAX_GAP_MS: intFromEnv(10_000, 0),
  HINTS_RETRY_THRESHOLD: intFromEnv(3, 0),

  OTLP_TASK_ID_ATTRIBUTE: z.string().trim().min(1).default('tool_audit.task_id'),
  OTLP_DEFAULT_ORCHESTRATOR: z.enum(['websocket', 'kernel', 'gateway', 'scheduler']).default('gateway'),
  OTLP_MCP_CALL_SIDE: z.enum(['client', 'server']).default('client'),
  OTLP_TURN_MESSAGES: z.enum(['on', 'off']).default('off'),
  OTLP_MAP_THREADS: intFromEnv(2, 0),
});

/** Parsed, validated configuration of every tool-audit process. */
export interface Config {
  /** dev: documented default secrets allowed (a laptop); production: refused (platform/default-secrets.ts). */
  mode: 'dev' | 'production';
  port: number;
  host: string;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  apiKeys: ApiKey[];
  clickhouse: {
    url: string | undefined;
    user: string | undefined;
    password: string | undefined;
    database: string;
    dataDir: string;
    /** Embedded engine: connections serving API reads side by side. */
    readConnections: number;
    /** Embedded engine: connections of ingest (look-ups and inserts beside the key filter's load). */
    ingestConnections: number;
    /** Embedded engine: connections of the background jobs. */
    jobConnections: number;
    /** Embedded engine: `max_threads` of each job connection (0 = the engine's default). */
    jobThreads: number;
    /** Embedded engine: the OS priority (nice, 0–19) of the job connections' threads, so reads and ingest go first. */
    jobNice: number;
    /** Embedded engine: the OS priority (nice, 0–19) of the engine's background merge and mutation threads. */
    mergeNice: number;
    /** Embedded engine: a ClickHouse server configuration file it starts with (users and grants, server settings). */
    embeddedConfig: string | undefined;
  };
  kafka: {
    brokers: string[] | undefined;
    topic: string;
    dlqTopic: string;
    groupId: string;
    clientId: string;
    partitions: number;
    sessionTimeoutMs: number;
  };
  retentionDays: { invocations: number; outputs: number; workflows: number; quarantine: number };
  ingest: {
    maxBodyBytes: number;
    maxPacketBytes: number;
    batchMaxPackets: number;
    flushMs: number;
    sinkRetryMaxMs: number;
    sinkUnhealthyAfterMs: number;
    /** Failures of one Kafka chunk before it is parked in the DLQ (INGEST_CHUNK_MAX_ATTEMPTS). */
    chunkMaxAttempts: number;
    dedupCacheEntries: number;
    /** Memory of one slice of each writer's key filter in MiB (INGEST_KEY_FILTER_MB; ingest/key-index.ts): the filter grows by slices. */
    keyFilterMb: number;
    /** Folder of the key filter's snapshot (INGEST_KEY_SNAPSHOT_DIR; default TOOL_AUDIT_DATA_DIR/tool-audit-state; `none`: no snapshot, '' here). */
    keySnapshotDir: string;
    /** How often a writer writes its key filter's snapshot, besides after a full load and at shutdown (INGEST_KEY_SNAPSHOT_MS); 0: only then. */
    keySnapshotEveryMs: number;
    partitionsConcurrency: number;
    /** kafkajs consumers per ingest process (INGEST_CONSUMERS). */
    consumers: number;
    /** Threads decoding packets beside the main thread; 0 decodes on it (INGEST_DECODE_THREADS). */
    decodeThreads: number;
    /** `serve` with Kafka also consumes (off where separate `tool-audit ingest` workers run). */
    workerInProcess: boolean;
  };
  /**
   * The audit log, built where the analyzer runs. `signingKey`: AUDIT_LOG_SIGNING_KEY
   * (an Ed25519 private key, PEM), or (undefined) the key file the process keeps in its state folder.
   */
  auditLog: {
    enabled: boolean;
    signingKey: string | undefined;
    headIntervalMs: number;
    graceMs: number;
    /** Where the builder keeps its key file and checkpoint ledger (AUDIT_LOG_DIR; default beside the data directory, never in it). */
    dir: string;
    /** The log's name in its checkpoints (AUDIT_LOG_ORIGIN; default tool-audit/<database>). */
    origin: string;
    /** Witnesses each checkpoint is sent to (AUDIT_LOG_WITNESS_URLS). */
    witnessUrls: string[];
  };
  /**
   * Secrets out of every row before it is written. `key`: REDACTION_KEY, or (undefined)
   * the key file the process keeps in its state folder (cli/redaction-key.ts).
   */
  redaction: {
    enabled: boolean;
    key: string | undefined;
    email: boolean;
    /** Paths replaced whole, per tool_id (`*`: every tool), from the call's fields: `args.password`. */
    paths: Record<string, string[]>;
    patterns: Array<{ rule: string; source: string; flags?: string }>;
  };
  /** Apply migrations at start (off for processes whose ClickHouse user may not run DDL). */
  migrateOnStart: boolean;
  /** A long-running process ends itself (SIGKILL) when its main thread is silent this long; 0 = off (platform/watchdog.ts). */
  watchdogMs: number;
  analysis: {
    dependencyWindowMs: number;
    auditGraceMs: number;
    overlapMs: number;
    analyzerIntervalMs: number;
    auditIntervalMs: number;
    /** Run the analyzer and auditor inside `serve` (turn off where `tool-audit analyze` runs). */
    enabledInServe: boolean;
  };
  /** The read API (SPEC §5). */
  queries: {
    /** ClickHouse `max_execution_time` of every read query, seconds. */
    maxExecutionSeconds: number;
    /** ClickHouse `max_result_rows` of every read query (overflow throws). */
    maxResultRows: number;
    /** `from` when a request gives none: this many days before now. */
    defaultWindowDays: number;
    /** `expensive = cost_usd > this` on every invocation, and the default of /v1/calls/expensive. */
    expensiveThresholdUsd: number;
    /** Default threshold of /v1/calls/slow. */
    slowThresholdMs: number;
    /** How often `serve` refreshes the dedup index (dedup_repeats); 0 turns it off. */
    dedupIndexIntervalMs: number;
  };
  /** Read requests per client (API key, else IP): a token bucket; perMinute 0 turns it off. */
  rateLimit: { perMinute: number; burst: number };
  /** Every route, before authentication: requests per client, and failed authentications per address (api/edge-limits.ts); 0 per minute is off. */
  edgeLimits: { perMinute: number; burst: number; authFailuresPerMinute: number };
  /** GET /v1/export: the window's span in days, and exports running at once per client and in all. */
  exportLimits: { maxDays: number; perClient: number; total: number };
  /** Where the CLI finds a running server (`task`, `top`, `demo`), and the key it sends. */
  client: { url: string | undefined; apiKey: string | undefined };
  /** Budgets checked before a tool runs. */
  budgets: {
    /** How long an allowed check's projected cost stays reserved when its call is never stored. */
    reservationTimeoutMs: number;
    /** How often recorded decisions are written to budget_decisions (batched off the check's path). */
    decisionsFlushMs: number;
    /** A port of its own for POST /v1/budget/check, served by the budget thread (0 = any free port); unset = main port only. */
    checkPort: number | undefined;
  };
  /** Optimization hints: the job's schedule and window, and the rules' thresholds. */
  hints: {
    /** How often the hints job runs (and the alignment of its windows); 0 turns it off. */
    intervalMs: number;
    /** How much history each run looks at, ending at the last interval boundary. */
    windowMs: number;
    /** cache_candidate: least share (0–1) of a tool's time or cost its simulated cache saves. */
    cacheMinShare: number;
    /** bundle_candidate: fewest runs of a sequence. */
    bundleMinCount: number;
    /** bundle_candidate: longest gap between a step's end and the next step's start. */
    bundleMaxGapMs: number;
    /** retry_storm: a task with more retried failed calls of one tool than this. */
    retryThreshold: number;
  };
  /** POST /v1/traces: how tool spans fill what the contract needs and a span lacks. */
  otlp: {
    /** Span (then resource) attribute holding task_id; absent → the trace id. */
    taskIdAttribute: string;
    /** orchestrator when neither resource attribute tool_audit.orchestrator nor service.name names one. */
    defaultOrchestrator: 'websocket' | 'kernel' | 'gateway' | 'scheduler';
    /** Which side's span of an MCP tools/call is the call (the other side's is not stored). */
    mcpCallSide: 'client' | 'server';
    /** Whether a model span's message attributes are stored with its turn (redacted as every stored text is). */
    turnMessages: boolean;
    /** Threads decoding and mapping trace requests beside the main thread; 0 maps on it. */
    mapThreads: number;
  };
}

/** Result of {@link loadConfig}: a config, or a message listing every bad variable. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; error: string };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** Whether a listen address is reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || host.startsWith('127.');
}

/** What the process will do with the configuration, for checks that depend on it. */
export interface LoadOptions {
  /** It serves the API on HOST: beyond loopback, API keys are required. */
  serving?: boolean;
}

/**
 * Parses an environment (default: process.env) into a {@link Config}. Never throws; every
 * offence is named at once, before anything is opened or migrated.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, opts: LoadOptions = {}): ConfigResult {
  const parsed = envSchema.safeParse(env);
  const lines = parsed.success ? [] : parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  if (opts.serving) {
    // From the raw values, so that it is reported beside the other offences, not after them.
    const host = env.HOST?.trim() || '127.0.0.1';
    if (!isLoopback(host) && !env.TOOL_AUDIT_API_KEYS?.trim()) {
      lines.push(`  HOST: ${host} is reachable beyond loopback: set TOOL_AUDIT_API_KEYS (keys with scopes ingest/read), or serve on 127.0.0.1`);
    }
  }
  const mode = modeOf(env);
  if (mode === undefined) lines.push(`  TOOL_AUDIT_MODE: must be dev or production; got ${env.TOOL_AUDIT_MODE}`);
  if (mode === 'production') lines.push(...defaultSecretLines(env), ...(parsed.success ? dualScopeLines(parsed.data.TOOL_AUDIT_API_KEYS) : []));
  if (!parsed.success || lines.length > 0 || mode === undefined) return { ok: false, error: `invalid configuration:\n${lines.join('\n')}` };
  const e = parsed.data;
  return {
    ok: true,
    config: {
      mode,
      port: e.PORT,
      host: e.HOST,
      logLevel: e.LOG_LEVEL,
      apiKeys: e.TOOL_AUDIT_API_KEYS,
      clickhouse: {
        url: e.CLICKHOUSE_URL,
        user: e.CLICKHOUSE_USER,
        password: e.CLICKHOUSE_PASSWORD,
        database: e.CLICKHOUSE_DATABASE,
        dataDir: e.TOOL_AUDIT_DATA_DIR,
        readConnections: e.CLICKHOUSE_READ_CONNECTIONS,
        ingestConnections: e.CLICKHOUSE_INGEST_CONNECTIONS,
        jobConnections: e.CLICKHOUSE_JOB_CONNECTIONS,
        jobThreads: e.CLICKHOUSE_JOB_THREADS,
        jobNice: e.CLICKHOUSE_JOB_NICE,
        mergeNice: e.CLICKHOUSE_MERGE_NICE,
        embeddedConfig: e.CLICKHOUSE_EMBEDDED_CONFIG,
      },
      kafka: {
        brokers: e.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean),
        topic: e.KAFKA_TOPIC,
        dlqTopic: e.KAFKA_DLQ_TOPIC,
        groupId: e.KAFKA_GROUP_ID,
        clientId: e.KAFKA_CLIENT_ID,
        partitions: e.KAFKA_TOPIC_PARTITIONS,
        sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      },
      retentionDays: {
        invocations: e.RETENTION_INVOCATIONS_DAYS,
        outputs: e.RETENTION_OUTPUTS_DAYS,
        workflows: e.RETENTION_WORKFLOWS_DAYS,
        quarantine: e.RETENTION_QUARANTINE_DAYS,
      },
      ingest: {
        maxBodyBytes: e.MAX_BODY_BYTES,
        maxPacketBytes: e.MAX_PACKET_BYTES,
        batchMaxPackets: e.INGEST_BATCH_MAX_PACKETS,
        flushMs: e.INGEST_FLUSH_MS,
        sinkRetryMaxMs: e.INGEST_SINK_RETRY_MAX_MS,
        sinkUnhealthyAfterMs: e.INGEST_SINK_UNHEALTHY_AFTER_MS,
        chunkMaxAttempts: e.INGEST_CHUNK_MAX_ATTEMPTS,
        dedupCacheEntries: e.DEDUP_CACHE_ENTRIES,
        keyFilterMb: e.INGEST_KEY_FILTER_MB,
        keySnapshotDir: e.INGEST_KEY_SNAPSHOT_DIR === 'none' ? '' : e.INGEST_KEY_SNAPSHOT_DIR ?? `${e.TOOL_AUDIT_DATA_DIR.replace(/\/+$/, '')}/tool-audit-state`,
        keySnapshotEveryMs: e.INGEST_KEY_SNAPSHOT_MS,
        partitionsConcurrency: e.INGEST_PARTITIONS_CONCURRENCY,
        consumers: e.INGEST_CONSUMERS,
        decodeThreads: e.INGEST_DECODE_THREADS,
        workerInProcess: e.INGEST_WORKER_IN_PROCESS,
      },
      auditLog: {
        enabled: e.AUDIT_LOG === 'on',
        signingKey: e.AUDIT_LOG_SIGNING_KEY,
        headIntervalMs: e.AUDIT_LOG_HEAD_INTERVAL_MS,
        graceMs: e.AUDIT_LOG_GRACE_MS,
        // Beside the data directory, not in it: a backup or copy of the database carries neither
        // the private key nor the checkpoints the database is checked against.
        dir: e.AUDIT_LOG_DIR ?? `${e.TOOL_AUDIT_DATA_DIR.replace(/\/+$/, '')}-audit-log`,
        origin: e.AUDIT_LOG_ORIGIN ?? `tool-audit/${e.CLICKHOUSE_DATABASE}`,
        witnessUrls: e.AUDIT_LOG_WITNESS_URLS ?? [],
      },
      redaction: {
        enabled: e.REDACTION === 'on',
        key: e.REDACTION_KEY,
        email: e.REDACTION_EMAIL,
        paths: e.REDACTION_PATHS ?? {},
        patterns: (e.REDACTION_PATTERNS ?? []).map((p) => ({ rule: p.rule, source: p.pattern, ...(p.flags ? { flags: p.flags } : {}) })),
      },
      migrateOnStart: e.MIGRATE_ON_START,
      watchdogMs: e.WATCHDOG_TIMEOUT_MS,
      analysis: {
        dependencyWindowMs: e.DEPENDENCY_WINDOW_MS,
        auditGraceMs: e.AUDIT_GRACE_MS,
        overlapMs: e.ANALYZER_OVERLAP_MS,
        analyzerIntervalMs: e.ANALYZER_INTERVAL_MS,
        auditIntervalMs: e.AUDIT_INTERVAL_MS,
        enabledInServe: e.ANALYZER_ENABLED,
      },
      queries: {
        maxExecutionSeconds: e.QUERY_MAX_EXECUTION_SECONDS,
        maxResultRows: e.QUERY_MAX_RESULT_ROWS,
        defaultWindowDays: e.QUERY_DEFAULT_WINDOW_DAYS,
        expensiveThresholdUsd: e.EXPENSIVE_THRESHOLD_USD,
        slowThresholdMs: e.SLOW_THRESHOLD_MS,
        dedupIndexIntervalMs: e.DEDUP_INDEX_INTERVAL_MS,
      },
      rateLimit: { perMinute: e.RATE_LIMIT_PER_MINUTE, burst: e.RATE_LIMIT_BURST },
      edgeLimits: { perMinute: e.EDGE_RATE_LIMIT_PER_MINUTE, burst: e.EDGE_RATE_LIMIT_BURST, authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE },
      exportLimits: { maxDays: e.EXPORT_MAX_DAYS, perClient: e.EXPORT_CONCURRENCY_PER_CLIENT, total: e.EXPORT_CONCURRENCY },
      client: { url: e.TOOL_AUDIT_URL, apiKey: e.TOOL_AUDIT_API_KEY },
      budgets: { reservationTimeoutMs: e.BUDGET_RESERVATION_TIMEOUT_MS, decisionsFlushMs: e.BUDGET_DECISIONS_FLUSH_MS, checkPort: e.BUDGET_CHECK_PORT },
      hints: {
        intervalMs: e.HINTS_INTERVAL_MS,
        windowMs: e.HINTS_WINDOW_MS,
        cacheMinShare: e.HINTS_CACHE_MIN_SHARE,
        bundleMinCount: e.HINTS_BUNDLE_MIN_COUNT,
        bundleMaxGapMs: e.HINTS_BUNDLE_MAX_GAP_MS,
        retryThreshold: e.HINTS_RETRY_THRESHOLD,
      },
      otlp: { taskIdAttribute: e.OTLP_TASK_ID_ATTRIBUTE, defaultOrchestrator: e.OTLP_DEFAULT_ORCHESTRATOR, mcpCallSide: e.OTLP_MCP_CALL_SIDE, turnMessages: e.OTLP_TURN_MESSAGES === 'on', mapThreads: e.OTLP_MAP_THREADS },
    },
  };
}
