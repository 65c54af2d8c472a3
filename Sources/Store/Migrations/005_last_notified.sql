-- 005: each user's latest accepted notification date beside the latest check-in, kept by a trigger
-- on notification_logs, so that "once per streak" (a row after L with email_sent) is a comparison
-- in the summary row instead of one more index probe per listed user.
ALTER TABLE user_last_check_in ADD COLUMN IF NOT EXISTS last_notified_date DATE;

CREATE OR REPLACE FUNCTION sileme_track_last_notified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        -- A removed or changed row may have been the latest accepted one: lock the summary row,
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

DROP TRIGGER IF EXISTS sileme_track_last_notified ON notification_logs;
CREATE TRIGGER sileme_track_last_notified
    AFTER INSERT OR DELETE OR UPDATE OF user_id, notification_date, email_sent ON notification_logs
    FOR EACH ROW EXECUTE FUNCTION sileme_track_last_notified();

-- A user's summary row may be created after their notifications (first check-in trigger): fill
-- the notified date in then too.
CREATE OR REPLACE FUNCTION sileme_fill_last_notified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    NEW.last_notified_date := (SELECT max(notification_date) FROM notification_logs
                               WHERE user_id = NEW.user_id AND email_sent);
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS sileme_fill_last_notified ON user_last_check_in;
CREATE TRIGGER sileme_fill_last_notified
    BEFORE INSERT ON user_last_check_in
    FOR EACH ROW EXECUTE FUNCTION sileme_fill_last_notified();

LOCK TABLE notification_logs IN SHARE ROW EXCLUSIVE MODE;
UPDATE user_last_check_in s SET last_notified_date = n.last
FROM (SELECT user_id, max(notification_date) AS last FROM notification_logs WHERE email_sent GROUP BY user_id) n
WHERE n.user_id = s.user_id AND s.last_notified_date IS DISTINCT FROM n.last;
