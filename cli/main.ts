#!/usr/bin/env node
/**
 * The `tool-audit` command line (SPEC §7).
 */
import { errorMessage } from '../platform/errors.ts';
import { configOrExit, openClickHouse } from './runtime.ts';
import { asksForHelp, isCommand, USAGES } from './usage.ts';

const USAGE = `usage: tool-audit <command>

  serve       HTTP API + ingest (npm start); with KAFKA_BROKERS, through Kafka
  ingest      Kafka ingest worker (run several: one consumer group)
  analyze     dependency analyzer, auditor and hints job (one per database)
  migrate     create or upgrade the ClickHouse schema (idempotent)
  task ID     a task's calls as an ordered tree with durations, costs and statuses
  top         per-tool table: calls, success rate, avg and p95 duration, cost (--from, --to)
  quarantine  list|show|replay quarantined packets (see \`tool-audit quarantine\`; replay asks the server)
  budgets     apply FILE | list: budgets checked before tools run (apply asks the server; admin key)
  manifests apply FILE|DIR
              apply a tool manifest (YAML/JSON, tool-smith format) as its next version
  cache       what a TTL cache would have saved per tool (--tool T for its TTL curve, --ttl 5m)
  hints       optimization hints: cache, bundle and retry-storm candidates (--kind K, --from, --to)
  demo        POST a realistic synthetic workload to a running server (--tasks N, --seed S)
              (task/top read ClickHouse directly, or a running server with --url / TOOL_AUDIT_URL)
  mcp         audit gateway for MCP: tool-audit mcp -- <server command> (stdio), or
              --upstream URL --listen PORT (Streamable HTTP); see \`tool-audit mcp --help\`
  search Q    calls and outputs whose args, summary, error, output sample or content hold every
              term and "quoted phrase" of Q (--tool, --agent, --status, --task, --orchestrator, --field, --from, --to)
  export      the stored calls, outputs, dependencies or violations of a range as NDJSON, CSV or
              Parquet (--kind K, --from, --to, --task T, --format F, --out FILE)
  verify      recompute the audit log from ClickHouse and prove it against every witnessed
              checkpoint: every altered, deleted, inserted or future-dated record
  audit-log   key | accept-rewrite --reason TEXT | rotate-key: the operator's steps on the log
  verify-proof FILE --public-key K
              check a proof of inclusion in the audit log offline (GET /v1/calls/{id}/proof)
  dashboards  write the Grafana dashboards as JSON (--out DIR, default deploy/grafana/dashboards)
  help [CMD]  this text, or a command's usage (as \`tool-audit CMD --help\`)

Configuration comes from the environment; see docs/operations.md.`;

async function main(argv: string[]): Promise<void> {
  const [command] = argv;
  if (isCommand(command) && asksForHelp(command, argv.slice(1))) return void process.stdout.write(`${USAGES[command]}\n`);
  if (command === 'help' && argv[1] !== undefined) {
    if (isCommand(argv[1])) return void process.stdout.write(`${USAGES[argv[1]]}\n`);
    process.stderr.write(`tool-audit: unknown command '${argv[1]}'\n${USAGE}\n`);
    process.exit(2);
  }
  switch (command) {
    case 'serve':
      return (await import('./serve.ts')).serve();
    case 'ingest':
      return (await import('./ingest.ts')).ingest();
    case 'analyze':
      return (await import('./analyze.ts')).analyze();
    case 'dashboards':
      return (await import('./dashboards.ts')).dashboards(argv.slice(1));
    case 'task':
      return (await import('./task.ts')).task(argv.slice(1));
    case 'top':
      return (await import('./top.ts')).top(argv.slice(1));
    case 'quarantine':
      return (await import('./quarantine.ts')).quarantine(argv.slice(1));
    case 'budgets':
      return (await import('./budgets.ts')).budgets(argv.slice(1));
    case 'manifests':
      return (await import('./manifests.ts')).manifests(argv.slice(1));
    case 'cache':
      return (await import('./cache.ts')).cache(argv.slice(1));
    case 'hints':
      return (await import('./hints.ts')).hints(argv.slice(1));
    case 'mcp':
      return (await import('./mcp.ts')).mcp(argv.slice(1));
    case 'demo':
      return (await import('./demo.ts')).demo(argv.slice(1));
    case 'search':
      process.exitCode = await (await import('./search.ts')).searchCommand(argv.slice(1));
      return;
    case 'export':
      process.exitCode = await (await import('./export.ts')).exportCommand(argv.slice(1));
      return;
    case 'verify':
      process.exitCode = await (await import('./verify.ts')).verify(argv.slice(1));
      return;
    case 'verify-proof':
      process.exitCode = (await import('./verify-proof.ts')).verifyProof(argv.slice(1));
      return;
    case 'audit-log':
      process.exitCode = await (await import('./audit-log.ts')).auditLogCommand(argv.slice(1));
      return;
    case 'migrate': {
      const config = configOrExit();
      const { migrate } = await import('../platform/clickhouse/migrate.ts');
      const ch = await openClickHouse(config);
      const r = await migrate(ch, { retentionDays: config.retentionDays });
      process.stdout.write(`database ${config.clickhouse.database}: applied ${r.applied.length} (${r.applied.join(', ') || 'none'}), already applied ${r.alreadyApplied.length}\n`);
      await ch.close();
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      process.stderr.write(`tool-audit: unknown command '${command}'\n${USAGE}\n`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`tool-audit: ${errorMessage(err)}\n`);
  process.exit(1);
});
