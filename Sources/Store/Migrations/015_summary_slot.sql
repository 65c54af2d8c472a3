-- 015: each user's time kept in the summary, so that a run of one notify instant reads only the
-- users on it (docs/user-time.md). Until now a run of an instant range-scanned the due window of
-- its date over every user and dropped those of other times after a probe of `users`: a day of
-- 192 instants cost 191 times the single run (bench/history/user-time.md).
--
-- `slot` is the user's (time_zone, notify_time) as one key — the expression of users_slot_idx
-- (014), '|' for a user with neither — indexed with the date as the due index orders it, so that
-- the due set of some slots is one range scan per slot. It is kept by two triggers: the
-- summary's insert trigger (a user's first check-in) reads it from `users`, and a change of a
-- user's zone or time moves it. Neither touches a check-in: the app's insert path is unchanged.
ALTER TABLE sileme.user_last_check_in ADD COLUMN IF NOT EXISTS slot TEXT NOT NULL DEFAULT '|';

UPDATE sileme.user_last_check_in s
SET slot = coalesce(u.time_zone, '') || '|' || coalesce(u.notify_time::text, '')
FROM users u
WHERE u.id = s.user_id AND (u.time_zone IS NOT NULL OR u.notify_time IS NOT NULL);

CREATE INDEX IF NOT EXISTS user_last_check_in_slot_idx
    ON sileme.user_last_check_in (slot, last_check_in_date DESC, user_id) INCLUDE (last_notified_date);

-- A user's first summary row: the latest accepted alert (as before) and their time.
CREATE OR REPLACE FUNCTION sileme.sileme_fill_last_notified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    NEW.last_notified_date := (SELECT max(notification_date) FROM notification_logs
                               WHERE user_id = NEW.user_id AND email_sent AND kind = 'alert');
    NEW.slot := coalesce((SELECT coalesce(u.time_zone, '') || '|' || coalesce(u.notify_time::text, '')
                          FROM users u WHERE u.id = NEW.user_id), '|');
    RETURN NEW;
END $$;

-- A user's zone or time changed: their summary row follows (one primary-key update; none for a
-- user who never checked in).
CREATE OR REPLACE FUNCTION sileme.sileme_track_slot() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE user_last_check_in SET slot = coalesce(NEW.time_zone, '') || '|' || coalesce(NEW.notify_time::text, '')
    WHERE user_id = NEW.id;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS sileme_track_slot ON users;
CREATE TRIGGER sileme_track_slot AFTER UPDATE OF time_zone, notify_time ON users
FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone OR OLD.notify_time IS DISTINCT FROM NEW.notify_time)
EXECUTE FUNCTION sileme.sileme_track_slot();

-- Both functions run as their owner: their search path pinned to the notifier's schema and the
-- app's, as 013 pinned the others', and nobody but the owner may call them.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    app    text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass('users'));
    name   text;
BEGIN
    FOREACH name IN ARRAY ARRAY['sileme_fill_last_notified', 'sileme_track_slot'] LOOP
        EXECUTE format('ALTER FUNCTION %I.%I() SET search_path = pg_catalog, %I, %I', target, name, target, app);
        EXECUTE format('REVOKE ALL ON FUNCTION %I.%I() FROM PUBLIC', target, name);
    END LOOP;
END $$;
