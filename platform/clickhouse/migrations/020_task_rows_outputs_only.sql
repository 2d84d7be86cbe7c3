-- Storage per call: task_rows (migration 007) kept every call, dependency and
-- output of a task once more as JSON, ~200 bytes per call at 10 M calls, the largest table. Calls
-- and dependencies do not need it: their segments are ordered by task_id first, so a task's calls
-- or dependencies are a range read of their own table, and the task view formats them with the
-- same formatRow the views used (queries/task-rows.ts). Outputs are ordered by tool and content:
-- only they stay in task_rows. Saves ~145 bytes per call (10 M calls: the call and dependency
-- rows' JSON, ids and times).
--
-- The task view reads task_rows for outputs only from this version on, so the rows deleted here
-- (in the background, as a mutation) are no longer read while the mutation runs.
DROP VIEW IF EXISTS {db:Identifier}.task_rows_calls;
DROP VIEW IF EXISTS {db:Identifier}.task_rows_dependencies;
ALTER TABLE {db:Identifier}.task_rows DELETE WHERE kind IN ('call', 'dependency');
