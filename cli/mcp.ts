/**
 * `tool-audit mcp`: the audit gateway between an MCP client and an MCP server.
 * stdio: the client launches `tool-audit mcp -- <server command>`; Streamable HTTP:
 * `tool-audit mcp --upstream URL --listen [HOST:]PORT`. Every tools/call becomes a tool_call,
 * delivered where the CLI delivers (TOOL_AUDIT_URL, else KAFKA_BROKERS) through the emitter's
 * bounded buffer: an audit failure never breaks or delays a call, it is counted.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createAuditEmitter, type AuditEmitter } from '../emit/emitter.ts';
import { AuditSession } from '../emit/mcp/audit-session.ts';
import { createCallGuard, newGuardStats } from '../emit/mcp/call-guard.ts';
import { createHttpGateway } from '../emit/mcp/http-gateway.ts';
import { startStdioGateway } from '../emit/mcp/stdio-gateway.ts';
import { ToolPin } from '../emit/mcp/tool-definitions.ts';
import { createToolsReporter } from '../emit/mcp/tools-reporter.ts';
import type { Config } from '../platform/config.ts';
import { AppError } from '../platform/errors.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import type { RedactionPolicy } from '../schemas/redaction-policy.ts';
import { parseOrchestrator } from '../schemas/vocabulary.ts';
import { redactionKeyPath, resolveRedaction } from './redaction-key.ts';
import { configOrExit } from './runtime.ts';
import { USAGES } from './usage.ts';


/** The gateway's options, parsed. */
export interface McpArgs {
  command: string[];
  upstream: URL | undefined;
  listen: { host: string; port: number } | undefined;
  agentId: string | undefined;
  server: string | undefined;
  taskId: string | undefined;
  orchestrator: ReturnType<typeof parseOrchestrator>;
  instanceId: string;
  pinFile: string | undefined;
  budgetUsd: number | undefined;
  budgetUnavailable: 'allow' | 'deny';
  /** How long a budget check may take before --budget-unavailable applies. */
  budgetTimeoutMs: number;
  url: string | undefined;
  bufferPackets: number;
}

/** Parses the command line; a message naming every problem when it is wrong. Pure. */
export function parseMcpArgs(argv: string[]): McpArgs | string {
  const dash = argv.indexOf('--');
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  let v;
  try {
    const s = { type: 'string' } as const;
    v = parseArgs({ args: own, strict: true, allowPositionals: false, options: { upstream: s, listen: s, 'agent-id': s, server: s, 'task-id': s, orchestrator: s, 'instance-id': s, 'pin-manifest': s, 'check-budget': s, 'budget-unavailable': s, 'budget-timeout-ms': s, url: s, 'buffer-packets': s } }).values;
  } catch (err) {
    return (err as Error).message;
  }
  const problems: string[] = [];
  const upstream = v.upstream === undefined ? undefined : urlOf(v.upstream, problems);
  const listen = v.listen === undefined ? undefined : listenOf(v.listen, problems);
  if (command.length === 0 && !upstream) problems.push('give a server command after -- (stdio) or --upstream URL (Streamable HTTP)');
  if (command.length > 0 && upstream) problems.push('give either a server command (stdio) or --upstream, not both');
  if (upstream && !listen) problems.push('--upstream needs --listen [HOST:]PORT');
  let orchestrator: McpArgs['orchestrator'] = 'gateway';
  try {
    orchestrator = parseOrchestrator(v.orchestrator ?? 'gateway', '--orchestrator');
  } catch (err) {
    problems.push((err as Error).message);
  }
  const budgetUsd = v['check-budget'] === undefined ? undefined : Number(v['check-budget']);
  if (budgetUsd !== undefined && !(Number.isFinite(budgetUsd) && budgetUsd >= 0)) problems.push(`--check-budget must be a cost in USD ≥ 0; got ${v['check-budget']}`);
  const unavailable = v['budget-unavailable'] ?? 'allow';
  if (unavailable !== 'allow' && unavailable !== 'deny') problems.push(`--budget-unavailable must be allow or deny; got ${unavailable}`);
  // 50 ms as the emitters: a check sits in front of every call. A server farther away needs more.
  const budgetTimeoutMs = Number(v['budget-timeout-ms'] ?? 50);
  if (!(Number.isInteger(budgetTimeoutMs) && budgetTimeoutMs >= 1)) problems.push(`--budget-timeout-ms must be a whole number of ms ≥ 1; got ${v['budget-timeout-ms']}`);
  const bufferPackets = Number(v['buffer-packets'] ?? 50_000);
  if (!(Number.isInteger(bufferPackets) && bufferPackets >= 1)) problems.push(`--buffer-packets must be a whole number ≥ 1; got ${v['buffer-packets']}`);
  if (problems.length > 0) return problems.join('; ');
  return {
    command,
    upstream,
    listen,
    agentId: v['agent-id'],
    server: v.server,
    taskId: v['task-id'],
    orchestrator,
    instanceId: v['instance-id'] ?? 'mcp-gateway',
    pinFile: v['pin-manifest'],
    budgetUsd,
    budgetUnavailable: unavailable as 'allow' | 'deny',
    budgetTimeoutMs,
    url: v.url,
    bufferPackets,
  };
}

/** `tool-audit mcp …`. */
export async function mcp(argv: string[]): Promise<void> {
  const args = parseMcpArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`tool-audit mcp: ${args}\n${USAGES.mcp}\n`);
    process.exit(2);
  }
  const config = configOrExit();
  const logger = createLogger(config.logLevel, 'tool-audit-mcp');
  const pin = args.pinFile === undefined ? undefined : readPin(args.pinFile);
  const url = args.url ?? config.client.url;
  const emitter = emitterOf(args, config, url, logger, await redactionOf(config, logger));
  const reporter = url ? createToolsReporter({ url, apiKey: config.client.apiKey, logger }) : undefined;
  if (!reporter) logger.warn('tools/list answers are reported to a tool-audit server only: set TOOL_AUDIT_URL to keep manifests from them');
  const guardStats = newGuardStats();
  const guard = createCallGuard({ pin, budget: args.budgetUsd === undefined ? undefined : emitter }, guardStats);
  const newSession = (taskId: string) =>
    new AuditSession({
      recorder: emitter,
      taskId,
      agentId: args.agentId,
      serverName: args.server,
      onToolsList: reporter ? (seen) => reporter.report(seen) : undefined,
      onAuditError: (err) => logger.warn({ err: (err as Error).message }, 'a message was relayed but could not be audited'),
    });
  let finishing = false;
  const report = (status: number): never => {
    const stats = emitter.stats();
    const undelivered = stats.dropped + stats.buffered;
    const fields = { emitter: stats, tools_lists: reporter?.stats(), guard: guardStats };
    if (undelivered > 0) logger.warn({ ...fields, undelivered }, `mcp gateway stopped; ${undelivered} audit packets were not delivered`);
    else logger.info(fields, 'mcp gateway stopped');
    process.exit(status);
  };
  // A client closing a stdio server allows ~2 s before SIGTERM: delivery gets 1.5 s of it, and a
  // signal while it runs reports at once, so the count of what was lost is never lost itself.
  const finish = async (status: number): Promise<never> => {
    finishing = true;
    // One deadline for both: the tools/list reports and the packets.
    const deadline = Date.now() + 1_500;
    await Promise.race([reporter?.drain(), new Promise((r) => setTimeout(r, 1_500))]);
    await emitter.close(Math.max(1, deadline - Date.now()));
    return report(status);
  };
  const onSignal = (stop: () => void) => () => (finishing ? report(143) : stop());
  if (args.upstream && args.listen) {
    const gw = createHttpGateway({ upstream: args.upstream, newSession, guard, logger });
    const { host, port } = args.listen;
    await new Promise<void>((resolve, reject) => gw.server.once('error', reject).listen(port, host, resolve));
    const address = gw.server.address();
    logger.info({ listen: address, upstream: args.upstream.href }, 'mcp gateway listening');
    const stop = onSignal(() => void gw.close().then(() => finish(0)));
    process.on('SIGTERM', stop).on('SIGINT', stop);
    return;
  }
  const [command, ...rest] = args.command as [string, ...string[]];
  const session = newSession(args.taskId ?? crypto.randomUUID());
  const gw = startStdioGateway({ command, args: rest, session, guard, input: process.stdin, output: process.stdout, logger });
  const stop = onSignal(() => gw.stop());
  process.on('SIGTERM', stop).on('SIGINT', stop);
  await finish(await gw.exited);
}

/**
 * The gateway's redaction: on by default, so secrets leave the agent's machine only as
 * placeholders. With REDACTION_KEY (the server's) one secret gets the server's placeholder; without
 * it, a key the gateway makes and keeps in its state folder (as serve does: on the server's own
 * machine and data directory, the very same key). REDACTION=off turns it off.
 */
async function redactionOf(config: Config, logger: Logger): Promise<RedactionPolicy | undefined> {
  const policy = await resolveRedaction(config);
  if (policy && !config.redaction.key) logger.info({ keyFile: redactionKeyPath(config) }, 'redacting with the key kept in the state folder; set REDACTION_KEY to the server\'s for one placeholder per secret across machines');
  return policy;
}

function emitterOf(args: McpArgs, config: Config, url: string | undefined, logger: Logger, redaction: RedactionPolicy | undefined): AuditEmitter {
  const common = { orchestrator: args.orchestrator, agentId: args.agentId ?? 'mcp-client', instanceId: args.instanceId, logger, buffer: { maxBuffered: args.bufferPackets }, ...(redaction ? { redaction } : {}) };
  const budget = args.budgetUsd === undefined ? undefined : { projectedCostUsd: args.budgetUsd, onUnavailable: args.budgetUnavailable, timeoutMs: args.budgetTimeoutMs, ...(url ? { url, apiKey: config.client.apiKey } : {}) };
  if (budget && !url) throw new AppError('CONFIG_INVALID', '--check-budget asks a tool-audit server: set TOOL_AUDIT_URL or --url', { retryable: false });
  if (url) return createAuditEmitter({ ...common, http: { url, apiKey: config.client.apiKey }, budget });
  if (config.kafka.brokers?.length) return createAuditEmitter({ ...common, kafka: { brokers: config.kafka.brokers, topic: config.kafka.topic } });
  throw new AppError('CONFIG_INVALID', 'tool-audit mcp delivers what it audits to TOOL_AUDIT_URL (or --url) or KAFKA_BROKERS: set one', { retryable: false });
}

function readPin(file: string): ToolPin {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new AppError('CONFIG_INVALID', `--pin-manifest ${file}: ${(err as Error).message}`, { retryable: false });
  }
  const pin = ToolPin.parse(doc);
  if (typeof pin === 'string') throw new AppError('CONFIG_INVALID', `--pin-manifest ${file}: ${pin}`, { retryable: false });
  return pin;
}

function urlOf(text: string, problems: string[]): URL | undefined {
  try {
    const u = new URL(text);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u;
  } catch {
    // named below
  }
  problems.push(`--upstream must be an http(s) URL; got ${text}`);
  return undefined;
}

function listenOf(text: string, problems: string[]): { host: string; port: number } | undefined {
  const m = /^(?:(.*):)?(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65_535) {
    problems.push(`--listen must be [HOST:]PORT; got ${text}`);
    return undefined;
  }
  return { host: m[1] || '127.0.0.1', port };
}
