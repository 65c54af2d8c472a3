-- 004: each user's latest check-in date, kept by a trigger on check_ins, so that the daily run
-- finds the due users with an index range scan over that date instead of aggregating the whole
-- check-in history (docs/rule.md: L is the latest check-in before D; a check-in on or after D cancels,
-- so the latest check-in overall is L whenever it is before D, and the user is fine otherwise).
CREATE TABLE IF NOT EXISTS user_last_check_in (
    user_id            UUID PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    last_check_in_date DATE NOT NULL
);
CREATE INDEX IF NOT EXISTS user_last_check_in_date_idx ON user_last_check_in (last_check_in_date);

-- Runs as the table owner (SECURITY DEFINER): the app's role that inserts check-ins needs no
-- rights on user_last_check_in. The search_path is pinned so the function cannot be hijacked.
CREATE OR REPLACE FUNCTION sileme_track_last_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        -- The removed or moved check-in may have been the latest: lock the user's row first (so
        -- a concurrent insert is seen by the recomputation below), then recompute from the index.
        PERFORM 1 FROM user_last_check_in WHERE user_id = OLD.user_id FOR UPDATE;
        UPDATE user_last_check_in s
           SET last_check_in_date = m.last
          FROM (SELECT max(check_in_date) AS last FROM check_ins WHERE user_id = OLD.user_id) m
         WHERE s.user_id = OLD.user_id AND m.last IS NOT NULL AND s.last_check_in_date IS DISTINCT FROM m.last;
        DELETE FROM user_last_check_in s
         WHERE s.user_id = OLD.user_id AND NOT EXISTS (SELECT 1 FROM check_ins WHERE user_id = OLD.user_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO user_last_check_in AS s (user_id, last_check_in_date)
        VALUES (NEW.user_id, NEW.check_in_date)
        ON CONFLICT (user_id) DO UPDATE
            SET last_check_in_date = EXCLUDED.last_check_in_date
            WHERE s.last_check_in_date < EXCLUDED.last_check_in_date;
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS sileme_track_last_check_in ON check_ins;
CREATE TRIGGER sileme_track_last_check_in
    AFTER INSERT OR DELETE OR UPDATE OF user_id, check_in_date ON check_ins
    FOR EACH ROW EXECUTE FUNCTION sileme_track_last_check_in();

-- TRUNCATE bypasses row triggers: empty the summary with it.
CREATE OR REPLACE FUNCTION sileme_truncate_last_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM user_last_check_in;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS sileme_truncate_last_check_in ON check_ins;
CREATE TRIGGER sileme_truncate_last_check_in
    AFTER TRUNCATE ON check_ins
    FOR EACH STATEMENT EXECUTE FUNCTION sileme_truncate_last_check_in();

-- Backfill from the existing history (one aggregate, once). The migration runs in a transaction
-- that holds check_ins' trigger lock, so no check-in slips between the backfill and the trigger.
LOCK TABLE check_ins IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO user_last_check_in (user_id, last_check_in_date)
SELECT user_id, max(check_in_date) FROM check_ins GROUP BY user_id
ON CONFLICT (user_id) DO UPDATE SET last_check_in_date = EXCLUDED.last_check_in_date;
