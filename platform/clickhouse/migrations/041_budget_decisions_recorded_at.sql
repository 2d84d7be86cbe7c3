-- When each budget decision was stored, as every other logged record has it: a decision is
-- written in batches off the check's path and held while ClickHouse refuses it, so decided_at can
-- lie minutes behind the insert — behind the audit log builder's watermark, where a row would
-- never become a leaf. Rows stored before this column take their decided_at (materialized into
-- the parts first, so a row's value never changes afterwards); later rows the insert's time.
ALTER TABLE {db:Identifier}.budget_decisions
    ADD COLUMN IF NOT EXISTS recorded_at DateTime64(3, 'UTC') DEFAULT decided_at
    COMMENT 'when the decision was stored (the audit log sequences it by this)';
ALTER TABLE {db:Identifier}.budget_decisions MATERIALIZE COLUMN recorded_at SETTINGS mutations_sync = 2;
ALTER TABLE {db:Identifier}.budget_decisions
    MODIFY COLUMN recorded_at DateTime64(3, 'UTC') DEFAULT now64(3)
    COMMENT 'when the decision was stored (the audit log sequences it by this)';
