/**
 * `tool-audit serve` (= npm start): the all-in-one process. HTTP API; packets go straight to
 * the segment writer (no Kafka configured) or through Kafka to an in-process ingest worker.
 */
import type { Kafka, Producer } from 'kafkajs';
import { startJobs } from '../analyzers/jobs.ts';
import { buildApp } from '../api/app.ts';
import { exportApiOf, readApiOf } from '../api/routes/read.ts';
import { createBudgetService } from '../api/budgets/service.ts';
import { createThreadDesk, type ThreadDesk } from '../api/budgets/thread.ts';
import { replayApiOf } from '../api/routes/quarantine-replay.ts';
import type { PacketIngest } from '../ingest/ports.ts';
import { jobsReport, type ReadinessReport } from '../api/routes/health.ts';
import { createKafkaEdge } from '../ingest/kafka-edge.ts';
import { createTraceMapPool } from '../ingest/otlp/map-pool.ts';
import { Redactor } from '../schemas/redaction-policy.ts';
import type { IngestWorker } from '../ingest/kafka-worker-config.ts';
import type { SegmentWriter } from '../ingest/segment-writer.ts';
import { createKafka, ensureTopics } from '../platform/kafka/client.ts';
import { createWriter, kafkaTopics, pingKafka, startKafkaWorker } from './ingest-wiring.ts';
import { onShutdown, startRuntime, type Runtime } from './runtime.ts';
import { startupSteps, type StartupSteps } from './startup-steps.ts';
import type { BudgetService } from '../api/budgets/service.ts';
import type { KeyIndexProgress } from '../ingest/key-index.ts';
import { AppError } from '../platform/errors.ts';
import { ensureWebBundle } from '../web/build.ts';
import { registerWebApp } from '../web/register.ts';
import { auditLogOptions } from './audit-log-key.ts';
import { hintsJobOptions } from './hints.ts';

/** The ingest path as it comes up: the Kafka worker and producer once connected, and what takes packets. */
interface IngestPath {
  worker?: IngestWorker;
  producer?: Producer;
  /** Packets are taken once their path is ready: at once without Kafka, else once the producer is. */
  ingest?: PacketIngest;
}

const notYet = (what: string) => Promise.reject(new AppError('STARTING', `tool-audit is starting: ${what} not ready yet (see /readyz)`, { retryable: true }));

/** Starts the server; resolves once it listens (before what grows with history has loaded). */
export async function serve(): Promise<void> {
  const rt = await startRuntime('tool-audit-serve', { serving: true });
  const { config, logger, clickhouse, metrics } = rt;
  const steps = startupSteps(logger);
  const { desk, budgets } = openBudgets(rt);
  const kafka = config.kafka.brokers ? createKafka({ brokers: config.kafka.brokers, clientId: config.kafka.clientId, logger }) : undefined;
  // A process that hands packets to Kafka for separate workers stores nothing itself: no writer,
  // so no key filter to load (memory growing with history) and no ingest grants (docs/operations.md).
  const writer = kafka && !config.ingest.workerInProcess ? undefined : createWriter(rt, metrics, budgets.onCallsStored);
  const path: IngestPath = {};

  // The dedup index serves this process's read API; the analyzer and auditor run here unless
  // `tool-audit analyze` runs them elsewhere. Their statements wait behind reads and ingest.
  const auditLog = config.analysis.enabledInServe ? await auditLogOptions(config, logger, metrics) : undefined;
  const jobs = startJobs(
    { clickhouse, metrics, logger },
    {
      ...(auditLog ? { auditLog } : {}),
      analysis: config.analysis.enabledInServe ? config.analysis : undefined,
      dedupIndexIntervalMs: config.queries.dedupIndexIntervalMs,
      hints: config.analysis.enabledInServe ? hintsJobOptions(config) : undefined,
    },
  );

  const otlpMapper = config.otlp.mapThreads > 0 ? createTraceMapPool(config.otlp.mapThreads, config.otlp) : undefined;
  const app = buildApp({
    ingest: { submit: (packets) => (path.ingest ? path.ingest.submit(packets) : notYet('Kafka')) },
    readiness: async (): Promise<ReadinessReport> => {
      // The budget thread answers budget checks: one that died makes every check fail.
      const checks: ReadinessReport['checks'] = { clickhouse: await clickhouse.ping(), ...steps.checks(), budget_thread: desk.health(), ...jobs.checks() };
      if (kafka && steps.done('kafka')) checks.kafka = await pingKafka(kafka);
      if (path.worker) checks.ingest_worker = path.worker.health();
      return { ready: Object.values(checks).every((c) => c.ok), checks, jobs: jobsReport(jobs.health()) };
    },
    metrics,
    read: readApiOf(config, clickhouse, metrics, budgets),
    // Exports are bulk work: on the jobs' lane (their threads at the jobs' nice value), so a
    // long one never holds a connection interactive reads are waiting for.
    export: exportApiOf(config, clickhouse.lane('job')),
    budgets: startedBudgets(budgets, () => steps.done('budgets'), notYet),
    replay: replayApiOf(config, clickhouse, metrics),
    manifests: { clickhouse: clickhouse.lane('read') },
    apiKeys: config.apiKeys,
    edgeLimits: config.edgeLimits,
    maxBodyBytes: config.ingest.maxBodyBytes,
    logger,
    otlp: config.otlp,
    ...(otlpMapper ? { otlpMapper } : {}),
  });
  // The pages at / read the same API; a clean clone's first start builds their bundle (~1 s).
  if (await ensureWebBundle()) logger.info('web app bundle built (web/dist)');
  registerWebApp(app);
  await app.listen({ port: config.port, host: config.host });
  logger.info(
    { port: config.port, host: config.host, clickhouse: config.clickhouse.url ?? `embedded:${config.clickhouse.dataDir}`, kafka: config.kafka.brokers ?? null },
    'tool-audit serving',
  );
  onShutdown(logger, async () => {
    // close() stops accepting and waits for in-flight requests, whose packets are then durable.
    await app.close();
    await otlpMapper?.close();
    await budgets.close();
    await path.producer?.disconnect();
    await path.worker?.stop();
    await jobs.stop();
    await writer?.close?.();
    await clickhouse.close();
  });
  startLoading(rt, steps, { budgets, desk, writer, kafka, path });
}

/**
 * Budgets are owned by the process whose writer stores the calls (see
 * docs/manifests-budgets-hints.md "Budgets"); their ledger lives on a thread of its own, which
 * also listens on BUDGET_CHECK_PORT when set.
 */
function openBudgets(rt: Runtime): { desk: ThreadDesk; budgets: BudgetService } {
  const { config, logger, clickhouse, metrics } = rt;
  const { checkPort, ...budgetTiming } = config.budgets;
  const desk = createThreadDesk(
    { reservationTimeoutMs: budgetTiming.reservationTimeoutMs, apiKeys: config.apiKeys, maxBodyBytes: config.ingest.maxBodyBytes, ...(checkPort === undefined ? {} : { listen: { host: config.host, port: checkPort }, edgeLimits: config.edgeLimits }) },
    logger,
  );
  const budgets = createBudgetService({
    clickhouse,
    logger,
    ctx: { limits: { maxExecutionSeconds: config.queries.maxExecutionSeconds, maxResultRows: config.queries.maxResultRows }, expensiveThresholdUsd: config.queries.expensiveThresholdUsd, metrics },
    ...budgetTiming,
    desk,
  });
  return { desk, budgets };
}

/**
 * What grows with history loads after the process answers (/readyz tells how far it is): the
 * budgets' ledger, the key filter, and the Kafka path; without Kafka packets go straight to the writer.
 */
function startLoading(
  rt: Runtime,
  steps: StartupSteps,
  o: { budgets: BudgetService; desk: ThreadDesk; writer: SegmentWriter | undefined; kafka: Kafka | undefined; path: IngestPath },
): void {
  const { config, logger, metrics } = rt;
  const { writer, kafka, path } = o;
  void steps.run('budgets', async () => {
    await o.budgets.start();
    if (o.desk.checkPort() !== null) logger.info({ port: o.desk.checkPort(), host: config.host }, 'budget checks served on a port of their own');
  });
  // The key filter loads while packets are taken: until it is loaded every key of a round is
  // looked up exactly (key-index.ts), so a start without a snapshot does not hold ingest back.
  if (writer) void steps.run('key_filter', () => writer.ready?.() ?? Promise.resolve(), () => describeKeys(writer.progress?.()));
  if (!kafka) {
    const direct = writer as NonNullable<typeof writer>; // made whenever Kafka is not configured
    path.ingest = { submit: (packets) => direct.write(packets) };
    return;
  }
  void steps.run('kafka', async () => {
    await ensureTopics(kafka, kafkaTopics(config));
    if (writer) path.worker = await startKafkaWorker(rt, kafka, writer, metrics);
    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
    path.producer = producer;
    await producer.connect();
    path.ingest = createKafkaEdge({ producer, topic: config.kafka.topic, maxPacketBytes: config.ingest.maxPacketBytes, redactor: rt.redaction && new Redactor(rt.redaction) });
  });
}

/** The key filter's load as /readyz tells it. */
function describeKeys(p: KeyIndexProgress | undefined): string {
  if (!p) return 'starting';
  const of = p.of === undefined ? '' : ` of ${p.of.toLocaleString('en-US')}`;
  return `${p.keys.toLocaleString('en-US')}${of} keys read from ${p.source === 'snapshot' ? 'the snapshot and the rows since' : 'the stored rows'}`;
}

/** The budget service, answering 503 (starting) until its ledger is loaded. */
function startedBudgets(service: BudgetService, loaded: () => boolean, notYet: (what: string) => Promise<never>): BudgetService {
  return {
    ...service,
    check: (req, keyId) => (loaded() ? service.check(req, keyId) : notYet('budgets')),
    list: () => (loaded() ? service.list() : notYet('budgets')),
    apply: (budgets, keyId) => (loaded() ? service.apply(budgets, keyId) : notYet('budgets')),
  };
}
