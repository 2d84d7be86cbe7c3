-- A model turn's messages (its span's message attributes as JSON text), stored only when the
-- deployment turns it on (OTLP_TURN_MESSAGES=on), redacted at ingest. NULL for every turn stored
-- before, and for turns without: such a turn's fingerprint and audit-log leaf are what they were.
ALTER TABLE {db:Identifier}.model_turns ADD COLUMN IF NOT EXISTS messages Nullable(String) CODEC(ZSTD(3));
