/**
 * Pieces of the reads that answer a window from the aggregates of migration 015 (`task_hours`,
 * `tool_hours`, `tool_days`) instead of scanning the calls. A window [from, to) splits into
 *
 *  - whole days [d_lo, d_hi) and whole hours [h_lo, h_hi) — read from the aggregates; and
 *  - the partial hours at its edges, [from, h_lo) and [h_hi, to) — read from the calls through the
 *    `by_created` projection (created_at order), so each is a range read of at most an hour.
 *
 * The whole hours start at the oldest stored call at the earliest: the hour TTL is cutting into is
 * read from the calls, so an aggregate never counts a call that TTL has already deleted (and the
 * aggregates live a day longer than their calls, so none is missing one the calls still hold).
 * Every statement binds these names in its WITH clause, so each stays one published statement.
 */

/**
 * WITH bindings: `h_lo`, `h_hi` (whole hours of the window) and `d_lo`, `d_hi` (whole days inside
 * them). When the window holds no whole hour, h_lo ≥ h_hi and everything is an edge. Computed in
 * epoch milliseconds and kept DateTime64(3): toStartOfHour() returns a DateTime, which overflows
 * after 2106 (a `to` of 2200 is a valid window), and ClickHouse 26.7's index analysis turns
 * `created_at < <DateTime>` into `created_at ≤ <that second − 1>`, pruning parts whose calls lie
 * in the last second before the bound.
 */
export const WINDOW_BOUNDS = `toUnixTimestamp64Milli(greatest({from:DateTime64(3, 'UTC')}, (SELECT min(created_at) FROM {db:Identifier}.tool_invocations))) AS lo_ms,
  fromUnixTimestamp64Milli(intDiv(lo_ms + 3599999, 3600000) * 3600000, 'UTC') AS h_lo,
  fromUnixTimestamp64Milli(intDiv(toUnixTimestamp64Milli({to:DateTime64(3, 'UTC')}), 3600000) * 3600000, 'UTC') AS h_hi,
  fromUnixTimestamp64Milli(intDiv(toUnixTimestamp64Milli(h_lo) + 86399999, 86400000) * 86400000, 'UTC') AS d_lo,
  fromUnixTimestamp64Milli(intDiv(toUnixTimestamp64Milli(h_hi), 86400000) * 86400000, 'UTC') AS d_hi`;

/** Calls of the window outside its whole hours: the edges, read from the calls. */
export const EDGE_CALLS = `created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}
  AND (created_at < h_lo OR created_at >= h_hi)`;

/** Rows of an hourly aggregate inside the window's whole hours. */
export const WHOLE_HOURS = 'hour >= h_lo AND hour < h_hi';

/** Rows of an hourly aggregate inside the whole hours but outside the whole days (read from the daily one). */
export const HOURS_OUTSIDE_DAYS = `${WHOLE_HOURS} AND (hour < d_lo OR hour >= d_hi)`;

/** Rows of a daily aggregate inside the window's whole days. */
export const WHOLE_DAYS = 'day >= d_lo AND day < d_hi';

/**
 * The window's rows per tool: `tool_days` for its whole days, `tool_hours` for its other whole
 * hours, and its edge calls grouped by tool. `aggregates` selects from the aggregate tables'
 * columns and `calls` the same values computed from the calls (same number and order: the union
 * takes the first arm's names); `filter` narrows every arm. Needs WINDOW_BOUNDS in the WITH clause.
 */
export const toolWindowRows = (aggregates: string, calls: string, filter = '1') => `SELECT tool_id, ${aggregates}
  FROM {db:Identifier}.tool_days
  WHERE ${WHOLE_DAYS} AND ${filter}
  UNION ALL
  SELECT tool_id, ${aggregates}
  FROM {db:Identifier}.tool_hours
  WHERE ${HOURS_OUTSIDE_DAYS} AND ${filter}
  UNION ALL
  SELECT tool_id, ${calls}
  FROM {db:Identifier}.tool_invocations
  WHERE ${EDGE_CALLS} AND ${filter}
  GROUP BY tool_id`;

/**
 * The window's rows per task (calls with a task): `task_hours` for its whole hours and its edge
 * calls grouped by task, as (task_id, n, failed, cost, agent_ids, first_at, last_at). `hours`
 * narrows the aggregate's arm only (the task list's candidates), `filter` both arms. Needs
 * WINDOW_BOUNDS in the WITH clause.
 */
export const taskWindowRows = (hours = '1', filter = '1') => `SELECT task_id, calls AS n, failures AS failed, cost_usd AS cost, agents AS agent_ids, first_at, last_at
  FROM {db:Identifier}.task_hours
  WHERE ${WHOLE_HOURS} AND ${hours} AND ${filter}
  UNION ALL
  SELECT task_id, count(), countIf(status != 'success'), sum(ifNull(cost_usd, 0)), groupUniqArray(toString(agent_id)), min(created_at), max(created_at)
  FROM {db:Identifier}.tool_invocations
  WHERE ${EDGE_CALLS} AND task_id != '' AND ${filter}
  GROUP BY task_id`;
