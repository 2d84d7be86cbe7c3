/**
 * Optimization-hints panel: the hints of the time range (created_at), one row per
 * hint_id, newest first, with what each is estimated to save.
 */
import { inWindow, PARAM_DOCS } from './dashboard-common.ts';
import type { QuerySpec } from './sql.ts';

/** Hints in the window, newest first. */
export const HINTS_TABLE: QuerySpec = {
  name: 'hints_table',
  description: 'Optimization hints created in the window (cache, bundle and retry-storm candidates), newest first, with their tools, estimated savings and evidence.',
  sql: `SELECT created_at, toString(kind) AS kind, arrayStringConcat(tool_ids, ' → ') AS tools, estimated_savings_ms / 1000 AS savings_s,
  estimated_savings_usd AS savings_usd, evidence, arrayStringConcat(task_ids_sample, ', ') AS tasks, toString(origin) AS origin
FROM {db:Identifier}.workflow_optimizations
WHERE ${inWindow('created_at')}
ORDER BY created_at DESC, hint_id DESC
LIMIT 1 BY hint_id
LIMIT 200`,
  params: { db: PARAM_DOCS.db, from: PARAM_DOCS.from, to: PARAM_DOCS.to },
};
