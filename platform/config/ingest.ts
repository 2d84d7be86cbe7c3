/**
 * How packets come in: Kafka, the ingest workers' batching, retries and key filter, the OTLP
 * mapping of trace spans, and the redaction every row passes before it is written.
 */
import { z } from 'zod';
import { dirBase, flag, intFromEnv, jsonFromEnv, onOff, optionalString, SHARED_VARIABLES } from './env-values.ts';

const redactionPaths = z.record(z.string().min(1), z.array(z.string().regex(/^(args|result_summary)(\.[^.]+)+$/, 'a path starts with args. or result_summary.')));
const redactionPatterns = z.array(
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

/** The ingest section. */
export const ingestSection = z
  .object({
    TOOL_AUDIT_DATA_DIR: SHARED_VARIABLES.TOOL_AUDIT_DATA_DIR,
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
    INGEST_WORKER_IN_PROCESS: flag(true),
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
    REDACTION: onOff('on'),
    REDACTION_KEY: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
    REDACTION_EMAIL: flag(false),
    REDACTION_PATHS: jsonFromEnv('REDACTION_PATHS', redactionPaths),
    REDACTION_PATTERNS: jsonFromEnv('REDACTION_PATTERNS', redactionPatterns),
    OTLP_TASK_ID_ATTRIBUTE: z.string().trim().min(1).default('tool_audit.task_id'),
    OTLP_DEFAULT_ORCHESTRATOR: z.enum(['websocket', 'kernel', 'gateway', 'scheduler']).default('gateway'),
    OTLP_MCP_CALL_SIDE: z.enum(['client', 'server']).default('client'),
    OTLP_TURN_MESSAGES: onOff('off'),
    OTLP_MAP_THREADS: intFromEnv(2, 0),
  })
  .transform((e) => ({
    kafka: {
      brokers: e.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean),
      topic: e.KAFKA_TOPIC,
      dlqTopic: e.KAFKA_DLQ_TOPIC,
      groupId: e.KAFKA_GROUP_ID,
      clientId: e.KAFKA_CLIENT_ID,
      partitions: e.KAFKA_TOPIC_PARTITIONS,
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
    },
    ingest: {
      maxBodyBytes: e.MAX_BODY_BYTES,
      maxPacketBytes: e.MAX_PACKET_BYTES,
      batchMaxPackets: e.INGEST_BATCH_MAX_PACKETS,
      flushMs: e.INGEST_FLUSH_MS,
      sinkRetryMaxMs: e.INGEST_SINK_RETRY_MAX_MS,
      sinkUnhealthyAfterMs: e.INGEST_SINK_UNHEALTHY_AFTER_MS,
      /** Failures of one Kafka chunk before it is parked in the DLQ (INGEST_CHUNK_MAX_ATTEMPTS). */
      chunkMaxAttempts: e.INGEST_CHUNK_MAX_ATTEMPTS,
      dedupCacheEntries: e.DEDUP_CACHE_ENTRIES,
      /** Memory of one slice of each writer's key filter in MiB (INGEST_KEY_FILTER_MB; ingest/key-index.ts): the filter grows by slices. */
      keyFilterMb: e.INGEST_KEY_FILTER_MB,
      /** Folder of the key filter's snapshot (INGEST_KEY_SNAPSHOT_DIR; default TOOL_AUDIT_DATA_DIR/tool-audit-state; `none`: no snapshot, '' here). */
      keySnapshotDir: e.INGEST_KEY_SNAPSHOT_DIR === 'none' ? '' : (e.INGEST_KEY_SNAPSHOT_DIR ?? `${dirBase(e.TOOL_AUDIT_DATA_DIR)}/tool-audit-state`),
      /** How often a writer writes its key filter's snapshot, besides after a full load and at shutdown (INGEST_KEY_SNAPSHOT_MS); 0: only then. */
      keySnapshotEveryMs: e.INGEST_KEY_SNAPSHOT_MS,
      partitionsConcurrency: e.INGEST_PARTITIONS_CONCURRENCY,
      /** kafkajs consumers per ingest process (INGEST_CONSUMERS). */
      consumers: e.INGEST_CONSUMERS,
      /** Threads decoding packets beside the main thread; 0 decodes on it (INGEST_DECODE_THREADS). */
      decodeThreads: e.INGEST_DECODE_THREADS,
      /** `serve` with Kafka also consumes (off where separate `tool-audit ingest` workers run). */
      workerInProcess: e.INGEST_WORKER_IN_PROCESS,
    },
    /**
     * Secrets out of every row before it is written. `key`: REDACTION_KEY, or (undefined)
     * the key file the process keeps in its state folder (cli/redaction-key.ts).
     */
    redaction: {
      enabled: e.REDACTION,
      key: e.REDACTION_KEY,
      email: e.REDACTION_EMAIL,
      /** Paths replaced whole, per tool_id (`*`: every tool), from the call's fields: `args.password`. */
      paths: e.REDACTION_PATHS ?? {},
      patterns: (e.REDACTION_PATTERNS ?? []).map((p): { rule: string; source: string; flags?: string } => ({ rule: p.rule, source: p.pattern, ...(p.flags ? { flags: p.flags } : {}) })),
    },
    /** POST /v1/traces: how tool spans fill what the contract needs and a span lacks. */
    otlp: {
      /** Span (then resource) attribute holding task_id; absent → the trace id. */
      taskIdAttribute: e.OTLP_TASK_ID_ATTRIBUTE,
      /** orchestrator when neither resource attribute tool_audit.orchestrator nor service.name names one. */
      defaultOrchestrator: e.OTLP_DEFAULT_ORCHESTRATOR,
      /** Which side's span of an MCP tools/call is the call (the other side's is not stored). */
      mcpCallSide: e.OTLP_MCP_CALL_SIDE,
      /** Whether a model span's message attributes are stored with its turn (redacted as every stored text is). */
      turnMessages: e.OTLP_TURN_MESSAGES,
      /** Threads decoding and mapping trace requests beside the main thread; 0 maps on it. */
      mapThreads: e.OTLP_MAP_THREADS,
    },
  }));

/** What {@link ingestSection} gives the configuration. */
export type IngestConfig = z.output<typeof ingestSection>;
