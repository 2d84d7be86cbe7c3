/**
 * The background jobs and what they decide: the audit log's builder, the dependency analyzer and
 * auditor, the optimization hints, and the budgets checked before a call.
 */
import { z } from 'zod';
import { dirBase, flag, intFromEnv, onOff, optionalString, SHARED_VARIABLES } from './env-values.ts';

/** The jobs section. */
export const jobsSection = z
  .object({
    TOOL_AUDIT_DATA_DIR: SHARED_VARIABLES.TOOL_AUDIT_DATA_DIR,
    CLICKHOUSE_DATABASE: SHARED_VARIABLES.CLICKHOUSE_DATABASE,
    AUDIT_LOG: onOff('on'),
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
    DEPENDENCY_WINDOW_MS: intFromEnv(60_000, 1),
    AUDIT_GRACE_MS: intFromEnv(300_000, 0),
    ANALYZER_OVERLAP_MS: intFromEnv(30_000, 0),
    ANALYZER_INTERVAL_MS: intFromEnv(1_000, 50),
    AUDIT_INTERVAL_MS: intFromEnv(10_000, 50),
    ANALYZER_ENABLED: flag(true),
    BUDGET_RESERVATION_TIMEOUT_MS: z.coerce.number().int().min(1).max(86_400_000).default(300_000),
    BUDGET_DECISIONS_FLUSH_MS: z.coerce.number().int().min(1).max(60_000).default(200),
    BUDGET_CHECK_PORT: optionalString.pipe(z.coerce.number<string | undefined>().int().min(0).max(65_535).optional()),
    HINTS_INTERVAL_MS: intFromEnv(3_600_000, 0),
    HINTS_WINDOW_MS: intFromEnv(86_400_000, 60_000),
    HINTS_CACHE_MIN_SHARE: z.coerce.number().finite().min(0).max(1).default(0.2),
    HINTS_BUNDLE_MIN_COUNT: intFromEnv(5, 2),
    HINTS_BUNDLE_MAX_GAP_MS: intFromEnv(10_000, 0),
    HINTS_RETRY_THRESHOLD: intFromEnv(3, 0),
  })
  .transform((e) => ({
    /**
     * The audit log, built where the analyzer runs. `signingKey`: AUDIT_LOG_SIGNING_KEY
     * (an Ed25519 private key, PEM), or (undefined) the key file the process keeps in its state folder.
     */
    auditLog: {
      enabled: e.AUDIT_LOG,
      signingKey: e.AUDIT_LOG_SIGNING_KEY,
      headIntervalMs: e.AUDIT_LOG_HEAD_INTERVAL_MS,
      graceMs: e.AUDIT_LOG_GRACE_MS,
      /**
       * Where the builder keeps its key file and checkpoint ledger (AUDIT_LOG_DIR). By default
       * beside the data directory, not in it: a backup or copy of the database carries neither
       * the private key nor the checkpoints the database is checked against.
       */
      dir: e.AUDIT_LOG_DIR ?? `${dirBase(e.TOOL_AUDIT_DATA_DIR)}-audit-log`,
      /** The log's name in its checkpoints (AUDIT_LOG_ORIGIN; default tool-audit/<database>). */
      origin: e.AUDIT_LOG_ORIGIN ?? `tool-audit/${e.CLICKHOUSE_DATABASE}`,
      /** Witnesses each checkpoint is sent to (AUDIT_LOG_WITNESS_URLS). */
      witnessUrls: e.AUDIT_LOG_WITNESS_URLS ?? [],
    },
    analysis: {
      dependencyWindowMs: e.DEPENDENCY_WINDOW_MS,
      auditGraceMs: e.AUDIT_GRACE_MS,
      overlapMs: e.ANALYZER_OVERLAP_MS,
      analyzerIntervalMs: e.ANALYZER_INTERVAL_MS,
      auditIntervalMs: e.AUDIT_INTERVAL_MS,
      /** Run the analyzer and auditor inside `serve` (turn off where `tool-audit analyze` runs). */
      enabledInServe: e.ANALYZER_ENABLED,
    },
    /** Budgets checked before a tool runs. */
    budgets: {
      /** How long an allowed check's projected cost stays reserved when its call is never stored. */
      reservationTimeoutMs: e.BUDGET_RESERVATION_TIMEOUT_MS,
      /** How often recorded decisions are written to budget_decisions (batched off the check's path). */
      decisionsFlushMs: e.BUDGET_DECISIONS_FLUSH_MS,
      /** A port of its own for POST /v1/budget/check, served by the budget thread (0 = any free port); unset = main port only. */
      checkPort: e.BUDGET_CHECK_PORT,
    },
    /** Optimization hints: the job's schedule and window, and the rules' thresholds. */
    hints: {
      /** How often the hints job runs (and the alignment of its windows); 0 turns it off. */
      intervalMs: e.HINTS_INTERVAL_MS,
      /** How much history each run looks at, ending at the last interval boundary. */
      windowMs: e.HINTS_WINDOW_MS,
      /** cache_candidate: least share (0–1) of a tool's time or cost its simulated cache saves. */
      cacheMinShare: e.HINTS_CACHE_MIN_SHARE,
      /** bundle_candidate: fewest runs of a sequence. */
      bundleMinCount: e.HINTS_BUNDLE_MIN_COUNT,
      /** bundle_candidate: longest gap between a step's end and the next step's start. */
      bundleMaxGapMs: e.HINTS_BUNDLE_MAX_GAP_MS,
      /** retry_storm: a task with more retried failed calls of one tool than this. */
      retryThreshold: e.HINTS_RETRY_THRESHOLD,
    },
  }));

/** What {@link jobsSection} gives the configuration. */
export type JobsConfig = z.output<typeof jobsSection>;
