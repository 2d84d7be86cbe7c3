-- The storage settings of migration 016 for the tables of the window aggregates (015): a replaced
-- part is removed a second after it was replaced, merged parts are fsynced (see 016).

ALTER TABLE {db:Identifier}.task_hours MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_hours MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_days MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.tool_durations MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
ALTER TABLE {db:Identifier}.window_aggregates_cutover MODIFY SETTING
    old_parts_lifetime = 1, cleanup_delay_period = 1, max_cleanup_delay_period = 10, cleanup_delay_period_random_add = 1,
    min_compressed_bytes_to_fsync_after_merge = 1;
