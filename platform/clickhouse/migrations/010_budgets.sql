-- Budgets checked before a tool runs. Both tables are append-only.
--
-- budget_versions: each PUT /v1/budgets (or `tool-audit budgets apply`) stores the whole set as
-- a new version; the newest version is the set in force. budgets = the set as JSON.
CREATE TABLE IF NOT EXISTS {db:Identifier}.budget_versions
(
    version     UInt64 COMMENT 'ms since the epoch when applied, strictly increasing per process',
    budgets     String COMMENT 'the whole set, JSON array of {budget_id, scope, period, limit_usd, mode}',
    key_id      String COMMENT 'sha256 prefix of the API key, or "open" without keys',
    applied_at  DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY version
SETTINGS non_replicated_deduplication_window = 10000;

-- budget_decisions: every answer of POST /v1/budget/check — the request, the figures of every
-- matching budget as the check saw them, and the decision.
CREATE TABLE IF NOT EXISTS {db:Identifier}.budget_decisions
(
    decision_id        UUID,
    decided_at         DateTime64(3, 'UTC'),
    agent_id           LowCardinality(String),
    tool_id            LowCardinality(String),
    task_id            String COMMENT 'empty string = none',
    call_id            String COMMENT 'empty string = none (no reservation)',
    projected_cost_usd Float64,
    decision           Enum8('allow' = 1, 'warn' = 2, 'deny' = 3),
    budgets            String COMMENT 'JSON array of {budget_id, limit_usd, spent_usd, reserved_usd, remaining_usd, mode} seen',
    budget_version     UInt64,
    key_id             String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(decided_at)
ORDER BY (decided_at, decision_id)
TTL toDateTime(decided_at) + toIntervalDay({invocations_days:UInt32})
SETTINGS non_replicated_deduplication_window = 10000;
