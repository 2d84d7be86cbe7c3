/**
 * ByAgent (SPEC §5, GET /v1/agents/{agent_id}/tools): which tools an agent uses, how often, and
 * in which order.
 */
import { NEWEST_FIRST_PARAM_DOCS, newestFirstCursor, newestFirstParams, newestFirstSql } from './by-tool-invocations.ts';
import { toInvocation, type InvocationReadRow } from './rows.ts';
import type { AgentTools } from '../schemas/answers.ts';
import { countsObject, pageOf, runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type TimeWindow, type StatementRunner } from './sql.ts';

/** Calls per tool of one agent. */
export const AGENT_TOOL_FREQUENCY: QuerySpec = {
  name: 'agent_tool_frequency',
  description: "Calls per tool of one agent in the window, most frequent first.",
  sql: `SELECT tool_id AS k, count() AS n
FROM {db:Identifier}.tool_invocations
WHERE agent_id = {agent_id:String}
  AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
GROUP BY k
ORDER BY n DESC, k`,
  params: { ...WINDOW_PARAM_DOCS, agent_id: 'the agent' },
};

/** One page of an agent's invocations, newest first. */
export const AGENT_INVOCATIONS: QuerySpec = {
  name: 'agent_invocations',
  description: "One agent's invocations, newest first (created_at, then call_id, descending).",
  sql: newestFirstSql('agent_id = {agent_id:String}'),
  params: { ...NEWEST_FIRST_PARAM_DOCS, agent_id: 'the agent' },
};

const cursor = newestFirstCursor('agent_invocations');

/** Parameters of {@link byAgent}. */
export interface ByAgentParams {
  agentId: string;
  window: TimeWindow;
  limit: number;
  cursor?: string;
}

/** Runs the agent view: tool frequency over the window, and one page of calls with their tool sequence. */
export async function byAgent(ch: StatementRunner, db: string, p: ByAgentParams, ctx: QueryContext): Promise<AgentTools> {
  const base = { db, agent_id: p.agentId, ...windowParams(p.window) };
  const frequency = await runQuery<{ k: string; n: number }>(ch, AGENT_TOOL_FREQUENCY, base, ctx);
  const rows =
    frequency.length === 0
      ? []
      : await runQuery<InvocationReadRow>(ch, AGENT_INVOCATIONS, { ...base, ...newestFirstParams(cursor, p.cursor), limit: p.limit + 1 }, ctx);
  const page = pageOf(rows, p.limit);
  const invocations = page.rows.map((r) => toInvocation(r, ctx.expensiveThresholdUsd));
  const last = page.rows[page.rows.length - 1];
  return {
    agent_id: p.agentId,
    tool_frequency: countsObject(frequency),
    tool_sequence: invocations.map((i) => i.tool_id).reverse(),
    invocations,
    next_cursor: page.more && last ? cursor.encode([Number(last.created_ms), last.call_id]) : null,
  };
}
