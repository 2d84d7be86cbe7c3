/**
 * The usage text of every command: printed by `tool-audit <command> --help` (and `tool-audit help
 * <command>`) on stdout with status 0, and by a command given bad arguments on stderr with status 2.
 * Pure data.
 */
import { HINT_KINDS } from '../schemas/optimization-hint.ts';

const ENV = 'Configuration comes from the environment; see docs/operations.md.';

/** Usage per command. */
export const USAGES = {
  serve: `usage: tool-audit serve
  HTTP API, pages and ingest (npm start); with KAFKA_BROKERS through Kafka, with its in-process
  ingest worker, analyzer and jobs unless INGEST_WORKER_IN_PROCESS / ANALYZER_ENABLED say otherwise.
${ENV}`,
  ingest: `usage: tool-audit ingest
  Kafka ingest worker (KAFKA_BROKERS required); run several: they share one consumer group.
${ENV}`,
  analyze: `usage: tool-audit analyze
  Dependency analyzer, auditor, manifest rules, dedup index and hints jobs: one per database.
${ENV}`,
  migrate: `usage: tool-audit migrate
  Create or upgrade the ClickHouse schema (idempotent), then exit.
${ENV}`,
  task: 'usage: tool-audit task <task_id> [--url URL] [--json]',
  top: 'usage: tool-audit top [--from ISO] [--to ISO] [--limit N] [--url URL] [--json]',
  quarantine: `usage: tool-audit quarantine <list|show|replay>
  list   [--reason CODE] [--source PREFIX] [--packet-type T] [--from ISO] [--to ISO] [--limit N] [--cursor C] [--json]
  show   ID [--raw]         (--raw: only the packet's exact bytes, to stdout)
  replay ID... [--packet FILE]...   (FILE: the producer's corrected packet for the ID at the same position)
  replay --filter [--reason CODE] [--source PREFIX] [--packet-type T] [--from ISO] [--to ISO] [--limit N] [--cursor C]
common: --url URL (default TOOL_AUDIT_URL; replay: http://127.0.0.1:8080), --json`,
  budgets: `usage: tool-audit budgets <apply FILE | list> [--url URL] [--json]
  apply FILE   put the budget set of FILE (a JSON array) in force: a new version of the whole set
               (PUT /v1/budgets; TOOL_AUDIT_API_KEY needs the admin scope)
  list         budgets with spent, reserved and remaining for the current UTC period`,
  manifests: 'usage: tool-audit manifests apply FILE|DIR [--url URL]',
  cache: 'usage: tool-audit cache [--tool T] [--ttl 5m|90s|1h|7d|MS] [--from ISO] [--to ISO] [--url URL] [--json]',
  hints: `usage: tool-audit hints [--kind ${HINT_KINDS.join('|')}] [--from ISO] [--to ISO] [--limit N] [--cursor C] [--url URL] [--json]`,
  demo: 'usage: tool-audit demo [--tasks N (1…100000)] [--seed S] [--hours H] [--url URL]',
  search: `usage: tool-audit search Q [--tool T] [--agent A] [--status S] [--task T] [--orchestrator O]
                        [--field args|result_summary|error|sample|content] [--from ISO] [--to ISO]
                        [--limit N] [--cursor C] [--url URL] [--json]
  Calls and outputs whose args, result summary, error, output sample or full content hold every
  term and "quoted phrase" of Q (case-insensitive, whole tokens), newest first, with the field and
  an excerpt; as GET /v1/search. Exit 2 on a query that cannot be searched.
${ENV}`,
  export: `usage: tool-audit export [--kind calls|outputs|dependencies|violations] [--from ISO] [--to ISO] [--task T]
                          [--format ndjson|csv|parquet] [--out FILE] [--url URL]
  The stored rows of a range (default: the last QUERY_DEFAULT_WINDOW_DAYS days) in table order
  (calls by task, then time), as GET /v1/export serves them, written to FILE (or standard output)
  as they come. From a running
  server with --url / TOOL_AUDIT_URL, else from ClickHouse directly (embedded: stop serve first).
  Exit 0 written whole, 1 broke off (FILE removed), 2 usage.
${ENV}`,
  verify: `usage: tool-audit verify [--from-leaf N] [--to-leaf M] [--public-key KEY]... [--witness FILE | --no-witness] [--max-findings N] [--json]
  Recomputes the audit log from ClickHouse: names every record altered, deleted or inserted since
  it was logged (and the part it is in), rows dated in the future, output contents that do not
  hash to their content_hash, and leaves of the log itself reordered or changed. Proves the stored
  log consistent with every checkpoint witnessed (--witness FILE, default AUDIT_LOG_DIR/checkpoints.jsonl),
  names the first it contradicts and the range rewritten. Checkpoints and the newest head must be
  signed by a --public-key (base64 DER, PEM, note verifier key, or a file), default the key this
  configuration signs with. Rows retention removed are counted as expired, not reported. The first
  --max-findings (10000) are listed, every one is counted. Exit 0 verified, 1 findings.
  On the embedded default: stop serve first.
${ENV}`,
  'audit-log': `usage: tool-audit audit-log <key | accept-rewrite --reason TEXT | rotate-key [--new-key FILE]>
  key             the signing key's public part and note verifier key, to pin
  accept-rewrite  the builder refuses to sign a history that does not extend its last checkpoint;
                  keep the stored history as it is: a signed reset (both trees and the reason) is
                  recorded in the ledger and the current tree becomes the last checkpoint
  rotate-key      a new signing key (FILE, PEM, or one made); the next checkpoint is signed by the
                  old key too, then the old key file is deleted
  Each step is recorded in AUDIT_LOG_DIR/checkpoints.jsonl. On the embedded default: stop serve first.
${ENV}`,
  'verify-proof': `usage: tool-audit verify-proof FILE --public-key KEY
  Checks a proof of inclusion in the audit log (GET /v1/calls/{call_id}/proof or
  /v1/outputs/{output_id}/proof; FILE - for stdin) offline: the leaf is the record, the tree head
  is signed by KEY (base64 DER or PEM, or a file holding it: the key serve printed at its first
  start, which you pinned), and the path leads from the leaf to the signed root. A consistency proof
  (GET /v1/log/consistency/{from}/{to}) is checked the same way: both heads signed by KEY, the older tree a
  prefix of the newer. Exit 0 verified, 1 not.`,
  mcp: `usage: tool-audit mcp [options] -- <server command> [args…]        (stdio)
       tool-audit mcp [options] --upstream URL --listen [HOST:]PORT     (Streamable HTTP)

  --agent-id ID          agent_id of the calls (default: the client's name from initialize)
  --server NAME          the server's name; tool_id = <server>/<tool> (default: its serverInfo.name)
  --task-id ID           task of calls naming none (stdio; default one new id per run; HTTP: the session id)
  --orchestrator O       websocket | kernel | gateway | scheduler (default gateway)
  --instance-id ID       default mcp-gateway
  --pin-manifest FILE    refuse tools absent from FILE (a tools/list result) or redefined since
                         (the gateway lists the live definitions itself: fails closed)
  --check-budget USD     ask POST /v1/budget/check before forwarding, projecting USD per call
  --budget-unavailable allow|deny   when the check gets no answer in time (default allow)
  --budget-timeout-ms N  how long a check may take (default 50)
  --url URL              the tool-audit server (default TOOL_AUDIT_URL; else KAFKA_BROKERS)
  --buffer-packets N     packets held while the sink is slow or away (default 50000); beyond, counted as dropped`,
  dashboards: `usage: tool-audit dashboards [--out DIR] [--database NAME] [--check]
  Write the Grafana dashboards as JSON (default deploy/grafana/dashboards); --check only reports
  files that differ from what would be written (status 1).`,
} as const;

/** A command with a usage text. */
export type Command = keyof typeof USAGES;

/** Whether `name` is a command. */
export function isCommand(name: string | undefined): name is Command {
  return name !== undefined && Object.hasOwn(USAGES, name);
}

/**
 * Whether a command's arguments ask for its usage: `--help` or `-h` among them (for `mcp`, only
 * before `--`: what follows is the MCP server's own command line).
 */
export function asksForHelp(command: Command, args: readonly string[]): boolean {
  const end = command === 'mcp' && args.includes('--') ? args.indexOf('--') : args.length;
  return args.slice(0, end).some((a) => a === '--help' || a === '-h');
}
