-- Each signed head also as a C2SP tlog-checkpoint signed note (origin, size, base64 root, then
-- one Ed25519 signature line per key): the form witnesses, monitors and any note library check,
-- and the one the builder keeps outside ClickHouse (AUDIT_LOG_DIR) to prove every next tree
-- against. Heads signed before this column existed keep '' (they have no note).
ALTER TABLE {db:Identifier}.audit_log_heads
    ADD COLUMN IF NOT EXISTS checkpoint String DEFAULT ''
    COMMENT 'the head as a signed note (C2SP tlog-checkpoint); empty for heads signed before checkpoints';
