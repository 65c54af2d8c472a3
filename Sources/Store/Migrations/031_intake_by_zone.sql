-- 031: a date is judged only where it is over (docs/intake-hold.md). The intake guard compared
-- the check-ins of a date counted so far with the usual whole day, across every zone: at 20:00 UTC
-- Auckland's yesterday is over while Los Angeles is at 13:00 of it, so a service of 900 users in
-- Los Angeles and 100 in Auckland saw a date 60% short at every Auckland morning and held every
-- due Auckland user as if the app had been down. The intake is now kept per day and per the
-- users' zone (`time_zone` as the app stores it, '' for none): the guard judges a date over the
-- zones where it has ended, against the same zones' usual intake.
ALTER TABLE sileme.daily_intake ADD COLUMN IF NOT EXISTS time_zone TEXT NOT NULL DEFAULT '';
ALTER TABLE sileme.daily_intake DROP CONSTRAINT IF EXISTS daily_intake_pkey;
ALTER TABLE sileme.daily_intake ADD PRIMARY KEY (day, time_zone);

-- The intake so far, counted again by zone from the check-ins already folded (the queued ones are
-- added by the fold that takes them), as 016 first counted it: one pass over check_ins. A
-- check-in deleted since was in the old count and is not in the new one; no day the guard judges
-- is old enough for that to matter. No fold runs meanwhile: the migration takes the fold's lock.
SELECT pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'));
DELETE FROM sileme.daily_intake;
INSERT INTO sileme.daily_intake (day, time_zone, users)
SELECT c.check_in_date, left(coalesce(u.time_zone, ''), 64), count(*)
FROM check_ins c LEFT JOIN users u ON u.id = c.user_id
WHERE NOT EXISTS (SELECT 1 FROM sileme.check_in_queue q WHERE q.user_id = c.user_id AND q.check_in_date = c.check_in_date)
GROUP BY 1, 2;

-- The fold, as 016 made it, now counting what it takes by the user's zone. A user whose zone
-- changes later stays counted where they were: the intake is what arrived.
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
            -- By the user's zone (031): a date is judged only where it is over.
            INSERT INTO daily_intake AS d (day, time_zone, users)
            SELECT t.check_in_date, left(coalesce(u.time_zone, ''), 64), count(*)
            FROM taken t LEFT JOIN users u ON u.id = t.user_id
            GROUP BY 1, 2
            ON CONFLICT (day, time_zone) DO UPDATE SET users = d.users + EXCLUDED.users
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

-- The rebuild of 021's installer, its intake by zone too.
CREATE OR REPLACE FUNCTION sileme.sileme_install_check_in_triggers() RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    -- Each trigger: its name (that of the function it calls), when it fires and for each what;
    -- as 004 and 012 made them. Triggers on one event fire in name order: the dequeue first.
    triggers text[] := ARRAY[
        ['sileme_dequeue_check_in', 'AFTER DELETE OR UPDATE OF user_id, check_in_date', 'ROW'],
        ['sileme_queue_check_in', 'AFTER INSERT', 'ROW'],
        ['sileme_track_last_check_in', 'AFTER DELETE OR UPDATE OF user_id, check_in_date', 'ROW'],
        ['sileme_truncate_last_check_in', 'AFTER TRUNCATE', 'STATEMENT']];
    wanted       text[] := ARRAY(SELECT triggers[i][1] FROM generate_subscripts(triggers, 1) i);
    target_table regclass := to_regclass('check_ins');
    stray        record;
    definition   text[];
BEGIN
    IF target_table IS NULL THEN
        RAISE EXCEPTION 'no table check_ins on the search path (%)', current_setting('search_path');
    END IF;
    FOR stray IN
        SELECT t.tgname, t.tgrelid::regclass AS rel
        FROM pg_trigger t
        WHERE t.tgname = ANY (wanted) AND t.tgrelid <> target_table AND t.tgparentid = 0 AND NOT t.tgisinternal
          AND t.tgfoid = to_regprocedure(quote_ident(t.tgname) || '()')
    LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', stray.tgname, stray.rel);
    END LOOP;

    IF NOT EXISTS (
        SELECT 1 FROM unnest(wanted) w
        WHERE NOT EXISTS (SELECT 1 FROM pg_trigger t
                          WHERE t.tgrelid = target_table AND t.tgname = w AND t.tgenabled IN ('O', 'A')
                            AND t.tgfoid = to_regprocedure(quote_ident(w) || '()')))
    THEN
        RETURN ARRAY[]::text[];
    END IF;

    -- No check-in, and no fold, between the rebuild and the triggers.
    LOCK TABLE check_ins IN SHARE ROW EXCLUSIVE MODE;
    PERFORM pg_advisory_xact_lock(hashtext('sileme_fold_check_ins'));

    FOREACH definition SLICE 1 IN ARRAY triggers LOOP
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', definition[1], target_table);
        EXECUTE format('CREATE TRIGGER %1$I %2$s ON %3$s FOR EACH %4$s EXECUTE FUNCTION %1$I()',
                       definition[1], definition[2], target_table, definition[3]);
    END LOOP;

    -- The rebuild: one pass over check_ins for the newest check-in of each user.
    CREATE TEMPORARY TABLE sileme_newest ON COMMIT DROP AS
        SELECT user_id, max(check_in_date) AS last FROM check_ins GROUP BY user_id;
    DELETE FROM sileme.check_in_queue q
     WHERE NOT EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = q.user_id AND c.check_in_date = q.check_in_date);
    INSERT INTO sileme.check_in_queue (user_id, check_in_date)
    SELECT n.user_id, n.last FROM sileme_newest n
    LEFT JOIN sileme.user_last_check_in s ON s.user_id = n.user_id
    WHERE (s.user_id IS NULL OR s.last_check_in_date < n.last)
      AND NOT EXISTS (SELECT 1 FROM sileme.check_in_queue q WHERE q.user_id = n.user_id AND q.check_in_date = n.last);
    UPDATE sileme.user_last_check_in s SET last_check_in_date = n.last
      FROM sileme_newest n
     WHERE s.user_id = n.user_id AND s.last_check_in_date > n.last;
    DELETE FROM sileme.user_last_check_in s WHERE NOT EXISTS (SELECT 1 FROM sileme_newest n WHERE n.user_id = s.user_id);
    INSERT INTO sileme.daily_intake AS d (day, time_zone, users)
    SELECT c.check_in_date, left(coalesce(u.time_zone, ''), 64), count(*) FROM check_ins c
    LEFT JOIN users u ON u.id = c.user_id
    WHERE NOT EXISTS (SELECT 1 FROM sileme.check_in_queue q WHERE q.user_id = c.user_id AND q.check_in_date = c.check_in_date)
    GROUP BY 1, 2
    ON CONFLICT (day, time_zone) DO UPDATE SET users = greatest(d.users, EXCLUDED.users);
    DROP TABLE sileme_newest;
    RETURN wanted;
END $$;

-- Both as before: the fold runs as its owner with the search path 013 pinned, the installer as
-- `migrate`'s owner with 021's; nobody else may call them (replacing a function keeps its grants,
-- not its settings).
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    app    text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass('users'));
    checks text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass('check_ins'));
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sileme_fold_check_ins() SET search_path = pg_catalog, %I, %I', target, target, app);
    EXECUTE format('ALTER FUNCTION %I.sileme_install_check_in_triggers() SET search_path = pg_catalog, %I, %I', target, target, checks);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sileme_fold_check_ins() FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sileme_install_check_in_triggers() FROM PUBLIC', target);
END $$;
