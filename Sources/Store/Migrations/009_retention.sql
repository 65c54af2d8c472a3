-- 009: RETENTION_DAYS. The daemon deletes notification_logs rows older than the retention in
-- small batches by date (this index finds them), and the summary trigger of 005 no longer
-- recomputes a user's latest accepted notification for every deleted row: only when the row
-- removed or changed may have been that latest one (an older row, or one never accepted, changes
-- nothing). So a batch of old rows costs one index probe each, and locks no summary row that a
-- check-in insert would wait for.
CREATE INDEX IF NOT EXISTS notification_logs_date_idx ON notification_logs (notification_date);

CREATE OR REPLACE FUNCTION sileme_track_last_notified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.email_sent
       AND EXISTS (SELECT 1 FROM user_last_check_in s
                   WHERE s.user_id = OLD.user_id AND (s.last_notified_date IS NULL OR s.last_notified_date <= OLD.notification_date)) THEN
        -- The removed or changed row may have been the latest accepted one: lock the summary row,
        -- then recompute from the (user_id, notification_date) index.
        PERFORM 1 FROM user_last_check_in WHERE user_id = OLD.user_id FOR UPDATE;
        UPDATE user_last_check_in s
           SET last_notified_date = (SELECT max(notification_date) FROM notification_logs
                                     WHERE user_id = OLD.user_id AND email_sent)
         WHERE s.user_id = OLD.user_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.email_sent THEN
        UPDATE user_last_check_in s
           SET last_notified_date = NEW.notification_date
         WHERE s.user_id = NEW.user_id
           AND (s.last_notified_date IS NULL OR s.last_notified_date < NEW.notification_date);
    END IF;
    RETURN NULL;
END $$;
