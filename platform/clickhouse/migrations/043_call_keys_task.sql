-- A proof reads its call's row by the calls' primary key (task_id, created_at, call_id). The task
-- came from the calls' projection by created_at: ~8 ms of a ~60 ms proof at 10 M calls. The keys
-- table, read first for the call's created_at, now keeps its task too. Calls stored before keep ''
-- (their proofs find the task as before); nothing is rewritten. ~1 % more storage per call.
ALTER TABLE {db:Identifier}.call_keys ADD COLUMN IF NOT EXISTS task_id String DEFAULT '' CODEC(ZSTD(1));

ALTER TABLE {db:Identifier}.call_keys_mv MODIFY QUERY
SELECT call_id, fingerprint, created_at, task_id FROM {db:Identifier}.tool_invocations;
