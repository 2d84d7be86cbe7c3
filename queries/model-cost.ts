/**
 * Model cost beside tool cost (GET /v1/cost/models): the window's model turns per model and per
 * agent — turns, tokens in, out and read from cache, cost, and turns without a cost — and each
 * agent's tool calls and tool cost, so the two can be read side by side. One statement: the turns
 * through their by_created projection (a range read of the window), the calls through theirs.
 */
import type { ModelCost } from '../schemas/answers.ts';
import { runQuery, windowParams, WINDOW_PARAM_DOCS, type QueryContext, type QuerySpec, type StatementRunner, type TimeWindow } from './sql.ts';

const IN_WINDOW = "created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}";
// Aliases apart from the column names: ClickHouse would read a column name inside its own sum as the alias.
const TURN_SUMS = `count() AS turns, sum(ifNull(input_tokens, 0)) AS in_tokens, sum(ifNull(output_tokens, 0)) AS out_tokens,
  sum(ifNull(cached_input_tokens, 0)) AS cached_tokens, sum(ifNull(cost_usd, 0)) AS cost, countIf(cost_usd IS NULL) AS unpriced,
  toUInt64(0) AS calls, toFloat64(0) AS call_cost`;

/** Per model, per agent (turns), per agent (calls): rows tagged by `part`. */
export const MODEL_COST: QuerySpec = {
  name: 'model_cost',
  description: 'Model turns of the window per model and per agent (turns, tokens, cost, turns without a cost), and per agent its tool calls and tool cost.',
  sql: `SELECT * FROM (
  SELECT 'model' AS part, toString(model) AS name, provider, ${TURN_SUMS}
  FROM {db:Identifier}.model_turns WHERE ${IN_WINDOW}
  GROUP BY model, provider ORDER BY cost DESC, name LIMIT {limit:UInt32})
UNION ALL
SELECT * FROM (
  SELECT 'agent' AS part, toString(agent_id) AS name, CAST(NULL, 'Nullable(String)') AS provider, ${TURN_SUMS}
  FROM {db:Identifier}.model_turns WHERE ${IN_WINDOW}
  GROUP BY agent_id ORDER BY cost DESC, name LIMIT {limit:UInt32})
UNION ALL
SELECT * FROM (
  SELECT 'agent_tools' AS part, toString(agent_id) AS name, CAST(NULL, 'Nullable(String)') AS provider, toUInt64(0) AS turns, toUInt64(0) AS in_tokens,
    toUInt64(0) AS out_tokens, toUInt64(0) AS cached_tokens, toFloat64(0) AS cost, toUInt64(0) AS unpriced,
    count() AS calls, sum(ifNull(cost_usd, 0)) AS call_cost
  FROM {db:Identifier}.tool_invocations WHERE ${IN_WINDOW}
  GROUP BY agent_id ORDER BY call_cost DESC, name LIMIT {limit:UInt32})`,
  params: { ...WINDOW_PARAM_DOCS, limit: 'models and agents at most' },
};

/** Parameters of {@link modelCost}. */
export interface ModelCostParams {
  window: TimeWindow;
  limit: number;
}

interface Row {
  part: 'model' | 'agent' | 'agent_tools';
  name: string;
  provider: string | null;
  turns: string | number;
  in_tokens: string | number;
  out_tokens: string | number;
  cached_tokens: string | number;
  cost: number;
  unpriced: string | number;
  calls: string | number;
  call_cost: number;
}

const sums = (r: Row) => ({
  turns: Number(r.turns),
  input_tokens: Number(r.in_tokens),
  output_tokens: Number(r.out_tokens),
  cached_input_tokens: Number(r.cached_tokens),
  cost_usd: Number(r.cost),
  unpriced_turns: Number(r.unpriced),
});

/** Runs {@link MODEL_COST}: models by cost, agents by model plus tool cost, and the totals. */
export async function modelCost(ch: StatementRunner, db: string, p: ModelCostParams, ctx: QueryContext): Promise<ModelCost> {
  const rows = await runQuery<Row>(ch, MODEL_COST, { db, ...windowParams(p.window), limit: p.limit }, ctx);
  const agents = new Map<string, ModelCost['agents'][number]>();
  const agent = (name: string) => {
    let a = agents.get(name);
    if (!a) agents.set(name, (a = { agent_id: name, turns: 0, input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cost_usd: 0, unpriced_turns: 0, tool_calls: 0, tool_cost_usd: 0 }));
    return a;
  };
  const models: ModelCost['models'] = [];
  for (const r of rows) {
    if (r.part === 'model') models.push({ model: r.name, provider: r.provider, ...sums(r) });
    else if (r.part === 'agent') Object.assign(agent(r.name), sums(r));
    else Object.assign(agent(r.name), { tool_calls: Number(r.calls), tool_cost_usd: Number(r.call_cost) });
  }
  const list = [...agents.values()].sort((a, b) => b.cost_usd + b.tool_cost_usd - (a.cost_usd + a.tool_cost_usd) || (a.agent_id < b.agent_id ? -1 : 1));
  const total = (k: 'turns' | 'input_tokens' | 'output_tokens' | 'cached_input_tokens' | 'cost_usd' | 'unpriced_turns') => models.reduce((s, m) => s + m[k], 0);
  return {
    models,
    agents: list,
    totals: {
      turns: total('turns'),
      input_tokens: total('input_tokens'),
      output_tokens: total('output_tokens'),
      cached_input_tokens: total('cached_input_tokens'),
      model_cost_usd: total('cost_usd'),
      unpriced_turns: total('unpriced_turns'),
      tool_calls: list.reduce((s, a) => s + a.tool_calls, 0),
      tool_cost_usd: list.reduce((s, a) => s + a.tool_cost_usd, 0),
    },
  };
}
