/**
 * `tool-audit search Q [--tool T] [--agent A] [--status S] [--task T] [--orchestrator O]
 * [--field args|result_summary|error|sample|content] [--from ISO] [--to ISO] [--limit N] [--cursor C] [--url URL] [--json]`:
 * the calls and outputs whose args, result summary, error, output sample or content hold every
 * term and "quoted phrase" of Q (GET /v1/search), newest first. Reads ClickHouse directly or a
 * running server (--url / TOOL_AUDIT_URL).
 */
import { given, listQuery, windowOf } from '../api/read-params.ts';
import { SEARCH_FIELDS, type SearchAnswer, type SearchField } from '../schemas/answers.ts';
import { isAppError } from '../platform/errors.ts';
import { table } from './cache.ts';
import { configOrExit } from './runtime.ts';
import { openReadQueries, parseArgs } from './task.ts';
import { USAGES } from './usage.ts';

/** Renders hits as a table, newest first. Pure. */
export function renderSearch(a: SearchAnswer): string {
  if (a.hits.length === 0) return 'nothing found in the window';
  const oneLine = (s: string) => s.replace(/\s+/g, ' ').slice(0, 100);
  const rows = a.hits.map((h) => [h.created_at.slice(0, 19).replace('T', ' '), h.kind, h.field, h.tool_id, h.task_id ?? '-', h.output_id ?? h.call_id, oneLine(h.excerpt)]);
  const out = table(['created', 'kind', 'field', 'tool', 'task', 'id', 'excerpt'], rows);
  if (a.next_cursor) out.push(`… more: --cursor ${a.next_cursor}`);
  return out.join('\n');
}

/** `tool-audit search`; resolves to the exit status. */
export async function searchCommand(argv: string[]): Promise<number> {
  const { flags, positional } = parseArgs(argv);
  const q = positional.join(' ');
  const when = { from: listQuery.from.safeParse(flags.from), to: listQuery.to.safeParse(flags.to), limit: listQuery.limit.safeParse(flags.limit) };
  if (!q || !when.from.success || !when.to.success || !when.limit.success || (flags.field !== undefined && !(SEARCH_FIELDS as readonly string[]).includes(flags.field))) {
    process.stderr.write(`${USAGES.search}\n`);
    return 2;
  }
  const config = configOrExit();
  const window = windowOf({ from: when.from.data, to: when.to.data }, { windowDays: config.queries.defaultWindowDays, expensiveThresholdUsd: 1, slowThresholdMs: 30_000 });
  const { queries, close } = await openReadQueries(flags);
  try {
    const answer = await queries.search({
      q,
      window,
      limit: when.limit.data ?? 50,
      ...given({ toolId: flags.tool, agentId: flags.agent, status: flags.status, taskId: flags.task, orchestrator: flags.orchestrator, field: flags.field as SearchField | undefined, cursor: flags.cursor }),
    });
    process.stdout.write(`${flags.json ? JSON.stringify(answer, null, 2) : renderSearch(answer)}\n`);
    return 0;
  } catch (err) {
    // A query the server (or the query itself) refuses: say why, as for a usage error.
    if (isAppError(err, 'BAD_REQUEST') || isAppError(err, 'SERVER_REFUSED')) {
      process.stderr.write(`tool-audit search: ${err.message}\n`);
      return 2;
    }
    throw err;
  } finally {
    await close();
  }
}
