-- 016: the app's outage is not a mass emergency (docs/intake-hold.md). A day on which the app's
-- backend could record no check-in makes every active user miss it; two days later every family
-- would be told at once. The notifier keeps each day's intake — how many check-ins dated that day
-- it has received — and holds the alerts whose missed days include a day whose intake fell far
-- below the usual.
--
-- `daily_intake` is kept by the fold: each fold adds the check-ins it takes, per date, to their
-- days (one upsert per date in the batch, under the fold's lock), so that the check-in insert
-- path is unchanged and the guard reads a handful of rows, never `check_ins`. A check-in deleted
-- or moved later is not taken off its day: the intake is what arrived.
CREATE TABLE IF NOT EXISTS sileme.daily_intake (
    day   DATE PRIMARY KEY,
    users INTEGER NOT NULL DEFAULT 0
);

-- The alerts held, one row per streak (a user and `L'`, where the missed days start): when the
-- hold began, the day it was first planned on, the gap days it was held for, and when it ends —
-- `HOLD_HOURS` after it began, or sooner by `sileme-notifier release`. The alert itself is an
-- ordinary alert once the hold is over (the same claim key, docs/delivery.md). `ended_at` is set once the runs
-- after `release_at` have sent what was held (the daemon stops waking for it).
CREATE TABLE IF NOT EXISTS sileme.held_alerts (
    user_id      UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    streak_after DATE NOT NULL,
    run_date     DATE NOT NULL,
    gap_days     DATE[] NOT NULL,
    held_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    release_at   TIMESTAMPTZ NOT NULL,
    released_by  TEXT,
    ended_at     TIMESTAMPTZ,
    PRIMARY KEY (user_id, streak_after)
);
-- The daemon's one question every minute: when does the next open hold end?
CREATE INDEX IF NOT EXISTS held_alerts_open_idx ON sileme.held_alerts (release_at) WHERE ended_at IS NULL;

ALTER TABLE sileme.notifier_runs ADD COLUMN IF NOT EXISTS held INTEGER;

-- The intake of every day so far, from the check-ins already folded (the queued ones are added
-- by the fold that takes them). No fold runs meanwhile: the migration takes the fold's lock.
SELECT pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'));
INSERT INTO sileme.daily_intake (day, users)
SELECT c.check_in_date, count(*)
FROM check_ins c
WHERE NOT EXISTS (SELECT 1 FROM sileme.check_in_queue q WHERE q.user_id = c.user_id AND q.check_in_date = c.check_in_date)
GROUP BY c.check_in_date
ON CONFLICT (day) DO NOTHING;

-- The fold, as 012 made it, and now also counting what it takes into the intake of its days.
CREATE OR REPLACE FUNCTION sileme.sileme_fold_check_ins() RETURNS SETOF uuid
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    cleared_user uuid;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'));
    FOR cleared_user IN
        WITH taken AS (
            DELETE FROM check_in_queue RETURNING user_id, check_in_date, queued_at
        ), intake AS (
            INSERT INTO daily_intake AS d (day, users)
            SELECT check_in_date, count(*) FROM taken GROUP BY check_in_date
            ON CONFLICT (day) DO UPDATE SET users = d.users + EXCLUDED.users
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

-- TRUNCATE check_ins empties what is derived from it, the intake too.
CREATE OR REPLACE FUNCTION sileme.sileme_truncate_last_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    DELETE FROM user_last_check_in;
    DELETE FROM check_in_queue;
    DELETE FROM daily_intake;
    RETURN NULL;
END $$;

-- Both functions run as their owner, with the search path 013 pinned; nobody but the owner and
-- the roles granted it already may call them (replacing a function keeps its grants). The new
-- tables: nothing to PUBLIC; a role that runs the notifier today (it may insert runs) may read the
-- intake and keep the holds, as config/least-privilege.sql grants a new installation's role.
DO $$
DECLARE
    target  text := current_setting('sileme_notifier.schema');
    app     text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.oid = to_regclass('users'));
    name    text;
    grantee text;
BEGIN
    FOREACH name IN ARRAY ARRAY['sileme_fold_check_ins', 'sileme_truncate_last_check_in'] LOOP
        EXECUTE format('ALTER FUNCTION %I.%I() SET search_path = pg_catalog, %I, %I', target, name, target, app);
        EXECUTE format('REVOKE ALL ON FUNCTION %I.%I() FROM PUBLIC', target, name);
    END LOOP;
    EXECUTE format('REVOKE ALL ON %I.daily_intake, %I.held_alerts FROM PUBLIC', target, target);
    FOR grantee IN
        SELECT DISTINCT a.grantee::regrole::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
        WHERE c.oid = format('%I.notifier_runs', target)::regclass AND a.privilege_type = 'INSERT'
          AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('GRANT SELECT ON %I.daily_intake TO %s', target, grantee);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %I.held_alerts TO %s', target, grantee);
    END LOOP;
END $$;
