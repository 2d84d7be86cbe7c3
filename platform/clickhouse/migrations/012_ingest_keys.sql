-- Ingest look-ups whose cost does not grow with the tables.
--
-- A write round asks "is this key stored, and with which fingerprint?" for tens of thousands of
-- keys. On the segments (ordered by task or tool) that reads whole key columns: the bloom
-- filters of tens of thousands of keys prune nothing. Two things replace it:
--  * each ingest writer keeps an in-memory Bloom filter of every stored key (ingest/key-index.ts),
--    loaded from the segments at start, which proves almost every new key new without
--    asking ClickHouse;
--  * the keys it cannot rule out (redeliveries, I1 reuse, the filter's false positives) are looked
--    up exactly in key tables ordered by key, so each key costs one granule, wherever it lies.
-- The key tables are derived data, fed by materialized views from every insert path; a key may
-- appear twice (an insert retried past deduplication), which look-ups tolerate, and a key may be
-- missing (a process killed between a segment's insert and its view's): look-ups then ask the
-- segment itself.

CREATE TABLE IF NOT EXISTS {db:Identifier}.call_keys
(
    call_id     UUID,
    fingerprint FixedString(32),
    created_at  DateTime64(3, 'UTC')
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY call_id
TTL toDateTime(created_at) + toIntervalDay({invocations_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.call_keys_mv TO {db:Identifier}.call_keys AS
SELECT call_id, fingerprint, created_at FROM {db:Identifier}.tool_invocations;

INSERT INTO {db:Identifier}.call_keys (call_id, fingerprint, created_at)
SELECT call_id, fingerprint, created_at FROM {db:Identifier}.tool_invocations;

CREATE TABLE IF NOT EXISTS {db:Identifier}.output_keys
(
    output_id   UUID,
    fingerprint FixedString(32),
    created_at  DateTime64(3, 'UTC')
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY output_id
TTL toDateTime(created_at) + toIntervalDay({outputs_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.output_keys_mv TO {db:Identifier}.output_keys AS
SELECT output_id, fingerprint, created_at FROM {db:Identifier}.tool_outputs;

INSERT INTO {db:Identifier}.output_keys (output_id, fingerprint, created_at)
SELECT output_id, fingerprint, created_at FROM {db:Identifier}.tool_outputs;

-- Transport positions of quarantined Kafka records: a poison record redelivered from the same
-- offset is found here and not quarantined twice.
CREATE TABLE IF NOT EXISTS {db:Identifier}.quarantine_keys
(
    source_key  String,
    received_at DateTime64(3, 'UTC')
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(received_at)
ORDER BY source_key
TTL toDateTime(received_at) + toIntervalDay({quarantine_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS {db:Identifier}.quarantine_keys_mv TO {db:Identifier}.quarantine_keys AS
SELECT source_key, received_at FROM {db:Identifier}.quarantine WHERE source_kind = 'kafka';

INSERT INTO {db:Identifier}.quarantine_keys (source_key, received_at)
SELECT source_key, received_at FROM {db:Identifier}.quarantine WHERE source_kind = 'kafka';

-- What each writer is about to write, logged BEFORE its segment inserts (a crash in between
-- leaves only a false "maybe stored"), so writers in other processes add it to their filters:
-- a reader takes the rows of another writer after the last (written_at, seq) it saw. A writer
-- inserts one round at a time, so written_at (set when the insert starts) grows with seq.
CREATE TABLE IF NOT EXISTS {db:Identifier}.ingest_key_log
(
    writer     String,
    seq        UInt64 COMMENT 'the round of the writer',
    h1         UInt32 COMMENT 'murmurHash3_32 of kind letter + key',
    h2         UInt32 COMMENT 'murmurHash3_32 of key + kind letter',
    written_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (writer, written_at, seq)
TTL toDateTime(written_at) + INTERVAL 2 DAY
SETTINGS non_replicated_deduplication_window = 10000;

-- Every writer that ever started, so that readers know whose log to follow.
CREATE TABLE IF NOT EXISTS {db:Identifier}.ingest_writers
(
    writer     String,
    started_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY writer;
