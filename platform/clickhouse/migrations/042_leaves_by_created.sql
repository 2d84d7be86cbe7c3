-- A proof finds its leaf at the record's created_at (from the keys table). 035's min/max index on
-- the leaves' created_at is read whole for that — one entry per 256 leaves, 94 k entries at 24 M
-- leaves, ~80 ms of a proof at 10 M calls. This projection holds each leaf's created_at and index
-- in created_at order: the instant's leaf indexes are a primary-key read of it (~2 bytes per leaf),
-- and the leaf itself then one of the log's (ordered by index). Built for existing parts in the
-- background; until then a lookup reads the index as before (same answer).
ALTER TABLE {db:Identifier}.audit_log_leaves
    ADD PROJECTION IF NOT EXISTS by_created (SELECT created_at, leaf_index ORDER BY created_at);
ALTER TABLE {db:Identifier}.audit_log_leaves MATERIALIZE PROJECTION by_created;
