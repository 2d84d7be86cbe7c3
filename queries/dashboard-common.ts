/**
 * Pieces shared by the panel-only read queries (queries/dashboard-*.ts): the same
 * {@link QuerySpec} shape as the API's queries, so they can be served by the API as well.
 */
import { WINDOW_PARAM_DOCS } from './sql.ts';

/** `created_at` inside the half-open window [from, to). */
export const CREATED_IN_WINDOW = `created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}`;

/** A column inside the half-open window [from, to) (for ingested_at, received_at, detected_at …). */
export const inWindow = (column: string) => `${column} >= {from:DateTime64(3, 'UTC')} AND ${column} < {to:DateTime64(3, 'UTC')}`;

/** Optional filters: '' matches every tool / agent. */
export const TOOL_FILTER = `({tool_id:String} = '' OR tool_id = {tool_id:String})`;
export const AGENT_FILTER = `({agent_id:String} = '' OR agent_id = {agent_id:String})`;

/** Time bucket of a series: the start of the `bucket_s`-second interval. */
export const bucketOf = (column: string) => `toStartOfInterval(${column}, toIntervalSecond({bucket_s:UInt32}))`;

/** Parameter documentation shared by the panel queries. */
export const PARAM_DOCS = {
  ...WINDOW_PARAM_DOCS,
  tool_id: "a tool, or '' for every tool",
  agent_id: "an agent, or '' for every agent",
  task_id: 'the task',
  bucket_s: 'width of a time bucket of a series, seconds (≥ 1)',
  limit: 'rows to return at most',
  threshold_usd: 'a call is expensive when cost_usd is strictly more than this',
} as const;

/** Success rate as the API computes it: successes / calls. */
export const SUCCESS_RATE = `countIf(status = 'success') / count()`;
/** p95 duration as the API computes it (linear interpolation between the two nearest ranks). */
export const P95_DURATION = 'quantileExactInclusive(0.95)(duration_ms)';
