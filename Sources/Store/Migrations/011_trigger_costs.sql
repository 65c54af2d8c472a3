-- 011: what the summary's triggers cost the app and the run. No table changes; the functions
-- keep what they compute.
--
-- notification_logs: the summary's latest accepted alert changes only when an accepted alert
-- row is written, changed or removed. The trigger of 005 ran its plpgsql function for every row
-- (each claim's insert, each outcome's update: two calls per message, ~50 µs each at a million
-- users); split by operation, each trigger now says in its WHEN clause which rows can matter, and
-- the function runs only for those (an accepted alert: once per message that is one).
DROP TRIGGER IF EXISTS sileme_track_last_notified ON notification_logs;
DROP TRIGGER IF EXISTS sileme_track_last_notified_insert ON notification_logs;
CREATE TRIGGER sileme_track_last_notified_insert
    AFTER INSERT ON notification_logs
    FOR EACH ROW WHEN (NEW.email_sent AND NEW.kind = 'alert')
    EXECUTE FUNCTION sileme_track_last_notified();
DROP TRIGGER IF EXISTS sileme_track_last_notified_update ON notification_logs;
CREATE TRIGGER sileme_track_last_notified_update
    AFTER UPDATE OF user_id, notification_date, email_sent, kind ON notification_logs
    FOR EACH ROW WHEN ((OLD.email_sent AND OLD.kind = 'alert') OR (NEW.email_sent AND NEW.kind = 'alert'))
    EXECUTE FUNCTION sileme_track_last_notified();
DROP TRIGGER IF EXISTS sileme_track_last_notified_delete ON notification_logs;
CREATE TRIGGER sileme_track_last_notified_delete
    AFTER DELETE ON notification_logs
    FOR EACH ROW WHEN (OLD.email_sent AND OLD.kind = 'alert')
    EXECUTE FUNCTION sileme_track_last_notified();

-- check_ins: a check-in moves its user's summary row with an UPDATE; the upsert (and with it the
-- summary's BEFORE INSERT trigger, which INSERT … ON CONFLICT runs even when the row exists, ~16
-- µs) only for a user who has no summary row yet. Otherwise as in 010: the same row, the same
-- all-clear queue and NOTIFY.
CREATE OR REPLACE FUNCTION sileme_track_last_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    cleared DATE;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM 1 FROM user_last_check_in WHERE user_id = OLD.user_id FOR UPDATE;
        UPDATE user_last_check_in s
           SET last_check_in_date = m.last
          FROM (SELECT max(check_in_date) AS last FROM check_ins WHERE user_id = OLD.user_id) m
         WHERE s.user_id = OLD.user_id AND m.last IS NOT NULL AND s.last_check_in_date IS DISTINCT FROM m.last;
        DELETE FROM user_last_check_in s
         WHERE s.user_id = OLD.user_id AND NOT EXISTS (SELECT 1 FROM check_ins WHERE user_id = OLD.user_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        -- `cleared_after` from the row before the update (SET reads the old values).
        UPDATE user_last_check_in s
           SET last_check_in_date = NEW.check_in_date,
               cleared_after = CASE WHEN s.last_notified_date > s.last_check_in_date THEN s.last_check_in_date END
         WHERE s.user_id = NEW.user_id AND s.last_check_in_date < NEW.check_in_date
        RETURNING s.cleared_after INTO cleared;
        IF NOT FOUND AND NOT EXISTS (SELECT 1 FROM user_last_check_in WHERE user_id = NEW.user_id) THEN
            -- The user's first check-in (or one racing it: the upsert settles which comes first).
            INSERT INTO user_last_check_in AS s (user_id, last_check_in_date)
            VALUES (NEW.user_id, NEW.check_in_date)
            ON CONFLICT (user_id) DO UPDATE
                SET last_check_in_date = EXCLUDED.last_check_in_date,
                    cleared_after = CASE WHEN s.last_notified_date > s.last_check_in_date THEN s.last_check_in_date END
                WHERE s.last_check_in_date < EXCLUDED.last_check_in_date
            RETURNING s.cleared_after INTO cleared;
        END IF;
        IF cleared IS NOT NULL THEN
            INSERT INTO pending_all_clears (user_id, streak_after, check_in_date)
            VALUES (NEW.user_id, cleared, NEW.check_in_date)
            ON CONFLICT (user_id) DO NOTHING;
            PERFORM pg_notify('sileme_check_in', NEW.user_id::text);
        END IF;
    END IF;
    RETURN NULL;
END $$;
