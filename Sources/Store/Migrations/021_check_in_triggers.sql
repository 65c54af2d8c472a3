-- 021: the notifier's triggers on check_ins, installed by one function that every `migrate` calls.
--
-- The app may replace its `check_ins` at any time — most often to partition it by month
-- (pg_partman): a new partitioned table, the rows copied, the names swapped in one transaction
-- (docs/operating.md, "Partitioning check_ins"). A trigger belongs to a table, not to a name: the
-- notifier's stay on the renamed old table, the new `check_ins` has none, and from then on no
-- check-in reaches the queue or the summary — every user who checks in afterwards would look
-- missing and be alerted. So the runs, the daemon's start and `check` refuse a `check_ins` without
-- these triggers (Store/CheckInTriggers.swift, one catalog query), and `migrate` — here, and after
-- every later migration — calls this function, which:
--
--  * drops the notifier's check-in triggers from any other table (the renamed old one: a TRUNCATE
--    of it would still empty the summary; a table attached as a partition would fire them twice);
--  * when one of the four is missing or disabled on the current `check_ins`, (re)creates all four
--    — on a partitioned table, PostgreSQL 13+ puts each row trigger on every partition, present
--    and future (pg_partman's run_maintenance() too) — and rebuilds what the missing triggers
--    did not see, under the table's trigger lock and the fold's lock, so nothing slips between:
--      - each user whose newest check-in is newer than the summary's is queued with it, so that
--        the next fold moves the summary and queues the all-clear of a streak it ended, as for
--        any check-in (its time is the repair's: the check-in's own was not seen);
--      - a summary row newer than the user's newest check-in (check-ins deleted unseen) goes
--        back to it, or away when none is left, with queue rows of check-ins no longer there;
--      - each day's intake becomes at least the check-ins dated that day not left in the queue
--        (the fold adds those), so that the unseen days do not look like an outage of the app.
--
-- It returns the names of the triggers it created: empty when nothing was missing (then it took no
-- lock and changed nothing). Not SECURITY DEFINER: `migrate` calls it as the tables' owner.
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
    INSERT INTO sileme.daily_intake AS d (day, users)
    SELECT c.check_in_date, count(*) FROM check_ins c
    WHERE NOT EXISTS (SELECT 1 FROM sileme.check_in_queue q WHERE q.user_id = c.user_id AND q.check_in_date = c.check_in_date)
    GROUP BY c.check_in_date
    ON CONFLICT (day) DO UPDATE SET users = greatest(d.users, EXCLUDED.users);
    DROP TABLE sileme_newest;
    RETURN wanted;
END $$;

-- Only `migrate` (the owner) calls it; it finds check_ins where the trigger functions do.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    app    text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass('check_ins'));
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sileme_install_check_in_triggers() SET search_path = pg_catalog, %I, %I', target, target, app);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sileme_install_check_in_triggers() FROM PUBLIC', target);
END $$;

SELECT sileme.sileme_install_check_in_triggers();
