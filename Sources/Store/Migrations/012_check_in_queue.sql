-- 012: a check-in costs the app one append; the summary is brought up to date by the notifier.
--
-- Until 011 the insert trigger updated the user's summary row inside the app's transaction: one
-- PL/pgSQL UPDATE, ~11% of a durable single-row insert and ~23% of its CPU (bench/, "Check-in
-- insert cost"). Now the insert trigger only appends (user, date, when) to `check_in_queue`;
-- `sileme_fold_check_ins()` moves the appended rows into the summary. The daemon folds every
-- second, and every run, `retry`, dry run and retry plan folds before it reads (docs/data.md,
-- "The check-in queue"). Updates and deletes of check-ins (rare: corrections, account deletions)
-- and TRUNCATE still change the summary at once, as before.

CREATE TABLE IF NOT EXISTS check_in_queue (
    user_id       UUID NOT NULL,
    check_in_date DATE NOT NULL,
    -- The check-in transaction's start, as the synchronous trigger wrote it into
    -- pending_all_clears.checked_in_at: the all-clear says when the person checked in.
    queued_at     TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- Deleting or moving a check-in removes its user's queue rows (below): one probe, however long
-- the queue has grown while no notifier folded it. The queue stays small, and so does the index.
CREATE INDEX IF NOT EXISTS check_in_queue_user_idx ON check_in_queue (user_id);

CREATE OR REPLACE FUNCTION sileme_queue_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    INSERT INTO check_in_queue (user_id, check_in_date) VALUES (NEW.user_id, NEW.check_in_date);
    RETURN NULL;
END $$;

-- The fold: takes every committed queue row (DELETE … RETURNING: a row of a check-in not yet
-- committed is not seen and stays for the next fold), moves each user's summary row to the
-- newest date taken (never back), and — as the insert trigger of 010 and 011 did — queues an
-- all-clear for a user whose check-in ended a streak with an accepted alert and sends NOTIFY
-- sileme_check_in with the user's id. Returns those users. A queue row always stands for a
-- check-in that exists: deleting or moving a check-in removes its user's queue rows first (the
-- trigger below), and a fold that has taken them makes that deletion wait for its commit, after
-- which the deletion recomputes the summary from check_ins. Folds take turns (an advisory lock),
-- so two never update the same rows in different orders.
CREATE OR REPLACE FUNCTION sileme_fold_check_ins() RETURNS SETOF uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
    cleared_user uuid;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'));
    FOR cleared_user IN
        WITH taken AS (
            DELETE FROM check_in_queue RETURNING user_id, check_in_date, queued_at
        ), latest AS (
            SELECT user_id, max(check_in_date) AS last FROM taken GROUP BY user_id
        ), moved AS (
            -- `cleared_after` from the row before the update (SET reads the old values).
            UPDATE user_last_check_in s
               SET last_check_in_date = l.last,
                   cleared_after = CASE WHEN s.last_notified_date > s.last_check_in_date THEN s.last_check_in_date END
              FROM latest l
             WHERE s.user_id = l.user_id AND s.last_check_in_date < l.last
            RETURNING s.user_id, s.cleared_after, s.last_check_in_date
        ), added AS (
            -- A user's first check-in (the summary's own trigger fills its latest accepted alert).
            INSERT INTO user_last_check_in AS s (user_id, last_check_in_date)
            SELECT l.user_id, l.last FROM latest l
            WHERE NOT EXISTS (SELECT 1 FROM user_last_check_in e WHERE e.user_id = l.user_id)
            ON CONFLICT (user_id) DO UPDATE
                SET last_check_in_date = EXCLUDED.last_check_in_date,
                    cleared_after = CASE WHEN s.last_notified_date > s.last_check_in_date THEN s.last_check_in_date END
                WHERE s.last_check_in_date < EXCLUDED.last_check_in_date
            RETURNING s.user_id, s.cleared_after, s.last_check_in_date
        ), cleared AS (
            SELECT user_id, cleared_after, last_check_in_date FROM moved WHERE cleared_after IS NOT NULL
            UNION ALL
            SELECT user_id, cleared_after, last_check_in_date FROM added WHERE cleared_after IS NOT NULL
        ), queued AS (
            -- When the streak ended: the first queued check-in after it (a join, not a subquery
            -- per user: that scanned the whole batch for each).
            INSERT INTO pending_all_clears (user_id, streak_after, check_in_date, checked_in_at)
            SELECT c.user_id, c.cleared_after, c.last_check_in_date, min(t.queued_at)
            FROM cleared c
            JOIN taken t ON t.user_id = c.user_id AND t.check_in_date > c.cleared_after
            GROUP BY c.user_id, c.cleared_after, c.last_check_in_date
            ON CONFLICT (user_id) DO NOTHING
        )
        SELECT user_id FROM cleared
    LOOP
        PERFORM pg_notify('sileme_check_in', cleared_user::text);
        RETURN NEXT cleared_user;
    END LOOP;
END $$;
-- Only the notifier folds (config/least-privilege.sql grants it); the app only appends.
REVOKE ALL ON FUNCTION sileme_fold_check_ins() FROM PUBLIC;

-- TRUNCATE empties the queue with the summary.
CREATE OR REPLACE FUNCTION sileme_truncate_last_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM user_last_check_in;
    DELETE FROM check_in_queue;
    RETURN NULL;
END $$;

-- Updates and deletes of check-ins keep the synchronous path of 011 (sileme_track_last_check_in,
-- unchanged), which recomputes the summary from check_ins. Before it — triggers on one event fire
-- in name order, and `sileme_dequeue…` sorts first — this one removes the user's queue rows
-- (which that recomputation covers), so that no fold brings back the date of a check-in deleted
-- or moved away, and creates the user's summary row if no fold had yet (the queue rows that would
-- have made it are gone; 011's function only updates an existing row). A streak ended by a
-- check-in whose queue row goes this way gets its all-clear from the sweep, which reads check_ins.
CREATE OR REPLACE FUNCTION sileme_dequeue_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    DELETE FROM check_in_queue WHERE user_id = OLD.user_id;
    INSERT INTO user_last_check_in (user_id, last_check_in_date)
    SELECT OLD.user_id, m.last FROM (SELECT max(check_in_date) AS last FROM check_ins WHERE user_id = OLD.user_id) m
    WHERE m.last IS NOT NULL
    ON CONFLICT (user_id) DO NOTHING;
    RETURN NULL;
END $$;

-- Inserts append, updates and deletes recompute. The swap is atomic: the migration's
-- transaction holds the table's trigger lock.
DROP TRIGGER IF EXISTS sileme_dequeue_check_in ON check_ins;
CREATE TRIGGER sileme_dequeue_check_in
    AFTER DELETE OR UPDATE OF user_id, check_in_date ON check_ins
    FOR EACH ROW EXECUTE FUNCTION sileme_dequeue_check_in();
DROP TRIGGER IF EXISTS sileme_track_last_check_in ON check_ins;
CREATE TRIGGER sileme_track_last_check_in
    AFTER DELETE OR UPDATE OF user_id, check_in_date ON check_ins
    FOR EACH ROW EXECUTE FUNCTION sileme_track_last_check_in();
DROP TRIGGER IF EXISTS sileme_queue_check_in ON check_ins;
CREATE TRIGGER sileme_queue_check_in
    AFTER INSERT ON check_ins
    FOR EACH ROW EXECUTE FUNCTION sileme_queue_check_in();
