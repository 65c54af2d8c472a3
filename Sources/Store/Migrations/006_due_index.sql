-- 006: the due set in the order the run reads it, from the index alone. The index is ordered as
-- the batch query sorts (latest check-in first, then user id) and carries last_notified_date, so
-- the range scan needs no sort and, on pages the visibility map knows, no heap visit; it replaces
-- 004's index on the date alone (which also served the stale count; this one does too).
CREATE INDEX IF NOT EXISTS user_last_check_in_due_idx
    ON user_last_check_in (last_check_in_date DESC, user_id) INCLUDE (last_notified_date);
DROP INDEX IF EXISTS user_last_check_in_date_idx;

-- Nearly every row changes each day (a check-in moves it); vacuum this narrow table early so its
-- visibility map stays current and the due-set scan stays index-only.
ALTER TABLE user_last_check_in SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
