-- Quarantine you can read and replay byte for byte.
--
-- raw_encoding says how `raw` holds the packet's bytes: 'utf8' = the bytes are valid UTF-8 and
-- `raw` is their text; 'base64' = the bytes are not UTF-8 (a Kafka record) and `raw` is their
-- base64; 'none' = a Kafka record without a value at all (null), `raw` is empty. Rows written
-- before this migration were all decoded as UTF-8 text, so 'utf8' is right for them.
ALTER TABLE {db:Identifier}.quarantine
    ADD COLUMN IF NOT EXISTS raw_encoding Enum8('utf8' = 1, 'base64' = 2, 'none' = 3) DEFAULT 'utf8' AFTER raw;

-- Each replay of a quarantined packet, recorded by the ingest pipeline as it judged the packet
-- (append-only: the quarantine row itself is never changed). quarantine_id = the quarantine
-- row's source_key; replay_id = one POST /v1/quarantine/replay; key_id = which API key asked
-- (a hash prefix, never the key); outcome = what the pipeline did with the replayed packet.
CREATE TABLE IF NOT EXISTS {db:Identifier}.quarantine_replays
(
    quarantine_id String,
    replay_id     String,
    key_id        String COMMENT 'sha256 prefix of the API key, or "open" without keys',
    corrected     Bool COMMENT 'true: the request carried the producer''s corrected packet, not the stored bytes',
    outcome       Enum8('accepted' = 1, 'duplicate' = 2, 'rejected' = 3),
    packet_type   LowCardinality(String),
    ids           Array(String),
    reason_code   LowCardinality(String),
    reason        String,
    source        String COMMENT 'where the replayed packet travelled: http:request#index or kafka:topic/partition@offset',
    replayed_at   DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(replayed_at)
ORDER BY (quarantine_id, replayed_at, replay_id)
TTL toDateTime(replayed_at) + toIntervalDay({quarantine_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;
