-- The notifier's functions and triggers as the migrations leave them (schema `sileme`, on a
-- fresh database migrated to the latest version): read here what each one does now; the
-- migrations in Migrations/ are the history. Generated, and checked by the integration test
-- CurrentFunctionsIntegrationTests: after a migration that changes one, run
--   SILEME_WRITE_CURRENT_FUNCTIONS=1 swift test --filter CurrentFunctions
-- and commit the result. Not run by anything.

CREATE OR REPLACE FUNCTION sileme.sileme_count_escalation_step()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme'
AS $function$
BEGIN
    UPDATE escalation_tally
       SET escalated = escalated + (NEW.escalated_at IS NOT NULL AND OLD.escalated_at IS NULL)::int,
           unheard   = unheard + (NEW.unheard_at IS NOT NULL AND OLD.unheard_at IS NULL)::int;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_count_user_times_change()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    UPDATE user_times_changes SET changes = changes + 1, last_xact = pg_current_xact_id()
    WHERE last_xact IS DISTINCT FROM pg_current_xact_id();
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_dequeue_check_in()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    DELETE FROM check_in_queue WHERE user_id = OLD.user_id;
    INSERT INTO user_last_check_in (user_id, last_check_in_date)
    SELECT OLD.user_id, m.last FROM (SELECT max(check_in_date) AS last FROM check_ins WHERE user_id = OLD.user_id) m
    WHERE m.last IS NOT NULL
    ON CONFLICT (user_id) DO NOTHING;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_fill_last_notified()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    NEW.last_notified_date := (SELECT max(notification_date) FROM notification_logs
                               WHERE user_id = NEW.user_id AND email_sent AND kind = 'alert');
    NEW.slot := coalesce((SELECT coalesce(u.time_zone, '') || '|' || coalesce(u.notify_time::text, '')
                          FROM users u WHERE u.id = NEW.user_id), '|');
    RETURN NEW;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_fold_check_ins()
 RETURNS SETOF uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_grant_like(target regclass, model regclass, model_privilege text, privileges text)
 RETURNS integer
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog'
AS $function$
DECLARE
    api     text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    object  text := CASE (SELECT relkind FROM pg_class WHERE oid = target) WHEN 'S' THEN 'SEQUENCE ' ELSE '' END || target::text;
    name    text;
    granted integer := 0;
BEGIN
    EXECUTE format('REVOKE ALL ON %s FROM PUBLIC', object);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %s FROM %I', object, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = model AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = model_privilege
    LOOP
        EXECUTE format('GRANT %s ON %s TO %I', privileges, object, name);
        granted := granted + 1;
    END LOOP;
    RETURN granted;
END
$function$;

CREATE OR REPLACE FUNCTION sileme.sileme_install_check_in_triggers()
 RETURNS text[]
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_note_contact()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
DECLARE
    address TEXT;
    owner   UUID;
BEGIN
    IF TG_TABLE_NAME = 'users' THEN
        -- No column list on the trigger (that would stop the app from altering the column's
        -- type): an update that leaves the address alone returns here.
        IF TG_OP = 'UPDATE' AND NEW.emergency_email IS NOT DISTINCT FROM OLD.emergency_email THEN
            RETURN NULL;
        END IF;
        address := lower(btrim(NEW.emergency_email));
        owner := NEW.id;
    ELSE
        IF TG_OP = 'UPDATE' AND NEW.email IS NOT DISTINCT FROM OLD.email THEN
            RETURN NULL;
        END IF;
        address := lower(btrim(NEW.email));
        owner := NEW.user_id;
    END IF;
    IF address IS NOT NULL AND address <> '' THEN
        INSERT INTO known_contacts (user_id, contact) VALUES (owner, address) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_queue_check_in()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    INSERT INTO check_in_queue (user_id, check_in_date) VALUES (NEW.user_id, NEW.check_in_date);
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_track_last_check_in()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_track_last_notified()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.email_sent AND OLD.kind = 'alert'
       AND EXISTS (SELECT 1 FROM user_last_check_in s
                   WHERE s.user_id = OLD.user_id AND (s.last_notified_date IS NULL OR s.last_notified_date <= OLD.notification_date)) THEN
        PERFORM 1 FROM user_last_check_in WHERE user_id = OLD.user_id FOR UPDATE;
        UPDATE user_last_check_in s
           SET last_notified_date = (SELECT max(notification_date) FROM notification_logs
                                     WHERE user_id = OLD.user_id AND email_sent AND kind = 'alert')
         WHERE s.user_id = OLD.user_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.email_sent AND NEW.kind = 'alert' THEN
        UPDATE user_last_check_in s
           SET last_notified_date = NEW.notification_date
         WHERE s.user_id = NEW.user_id
           AND (s.last_notified_date IS NULL OR s.last_notified_date < NEW.notification_date);
    END IF;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_track_slot()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    UPDATE user_last_check_in SET slot = coalesce(NEW.time_zone, '') || '|' || coalesce(NEW.notify_time::text, '')
    WHERE user_id = NEW.id;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_truncate_last_check_in()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    DELETE FROM user_last_check_in;
    DELETE FROM check_in_queue;
    DELETE FROM daily_intake;
    RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION sileme.sileme_watch_alert()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'sileme', 'public'
AS $function$
BEGIN
    IF NEW.email_sent THEN
        INSERT INTO escalations (user_id, alert_date, last_check_in_date, first_sent_at, clock_at)
        VALUES (NEW.user_id, NEW.notification_date,
                -- A row the app wrote without `L` still names it: m = D - L - 1.
                coalesce(NEW.last_check_in_date, NEW.notification_date - NEW.consecutive_miss_days - 1),
                coalesce(NEW.sent_at, now()), coalesce(NEW.sent_at, now()))
        ON CONFLICT DO NOTHING;
    END IF;
    -- `coalesce(a.email_sent, false)`, not `a.email_sent`: the same test, which the partial index
    -- of a date's accepted alerts (notification_logs_alerts_idx) cannot answer — else a cached
    -- generic plan may take it, read every alert of the day for each bounce, and a day's bounces
    -- cost the square of its alerts. This way it is a probe of the delivery key (user, date, kind).
    IF NEW.status = 'bounced'
       AND NOT EXISTS (SELECT 1 FROM notification_logs a
                       WHERE a.user_id = NEW.user_id AND a.notification_date = NEW.notification_date AND a.kind = 'alert'
                         AND a.channel = 'email' AND a.contact <> '' AND coalesce(a.email_sent, false) AND a.status <> 'bounced') THEN
        UPDATE escalations SET clock_at = '-infinity'
        WHERE user_id = NEW.user_id AND alert_date = NEW.notification_date AND stage = 'alerted';
    END IF;
    RETURN NULL;
END $function$;

-- Triggers
CREATE TRIGGER sileme_dequeue_check_in AFTER DELETE OR UPDATE OF user_id, check_in_date ON public.check_ins FOR EACH ROW EXECUTE FUNCTION sileme.sileme_dequeue_check_in();
CREATE TRIGGER sileme_queue_check_in AFTER INSERT ON public.check_ins FOR EACH ROW EXECUTE FUNCTION sileme.sileme_queue_check_in();
CREATE TRIGGER sileme_track_last_check_in AFTER DELETE OR UPDATE OF user_id, check_in_date ON public.check_ins FOR EACH ROW EXECUTE FUNCTION sileme.sileme_track_last_check_in();
CREATE TRIGGER sileme_truncate_last_check_in AFTER TRUNCATE ON public.check_ins FOR EACH STATEMENT EXECUTE FUNCTION sileme.sileme_truncate_last_check_in();
CREATE TRIGGER sileme_note_contact AFTER INSERT OR UPDATE ON public.emergency_contacts FOR EACH ROW EXECUTE FUNCTION sileme.sileme_note_contact();
CREATE TRIGGER sileme_track_last_notified_delete AFTER DELETE ON public.notification_logs FOR EACH ROW WHEN ((old.email_sent AND (old.kind = 'alert'::text))) EXECUTE FUNCTION sileme.sileme_track_last_notified();
CREATE TRIGGER sileme_track_last_notified_insert AFTER INSERT ON public.notification_logs FOR EACH ROW WHEN ((new.email_sent AND (new.kind = 'alert'::text))) EXECUTE FUNCTION sileme.sileme_track_last_notified();
CREATE TRIGGER sileme_track_last_notified_update AFTER UPDATE OF user_id, notification_date, email_sent, kind ON public.notification_logs FOR EACH ROW WHEN (((old.email_sent AND (old.kind = 'alert'::text)) OR (new.email_sent AND (new.kind = 'alert'::text)))) EXECUTE FUNCTION sileme.sileme_track_last_notified();
CREATE TRIGGER sileme_watch_alert AFTER INSERT OR UPDATE OF email_sent, status ON public.notification_logs FOR EACH ROW WHEN (((new.kind = 'alert'::text) AND (new.channel = 'email'::text) AND (new.contact <> ''::text) AND (new.email_sent OR (new.status = 'bounced'::text)))) EXECUTE FUNCTION sileme.sileme_watch_alert();
CREATE TRIGGER sileme_count_escalation_step AFTER UPDATE OF escalated_at, unheard_at ON sileme.escalations FOR EACH ROW WHEN ((((new.escalated_at IS NOT NULL) AND (old.escalated_at IS NULL)) OR ((new.unheard_at IS NOT NULL) AND (old.unheard_at IS NULL)))) EXECUTE FUNCTION sileme.sileme_count_escalation_step();
CREATE TRIGGER sileme_fill_last_notified BEFORE INSERT ON sileme.user_last_check_in FOR EACH ROW EXECUTE FUNCTION sileme.sileme_fill_last_notified();
CREATE TRIGGER sileme_count_user_times_delete AFTER DELETE ON public.users FOR EACH ROW WHEN (((old.time_zone IS NOT NULL) OR (old.notify_time IS NOT NULL))) EXECUTE FUNCTION sileme.sileme_count_user_times_change();
CREATE TRIGGER sileme_count_user_times_insert AFTER INSERT ON public.users FOR EACH ROW WHEN (((new.time_zone IS NOT NULL) OR (new.notify_time IS NOT NULL))) EXECUTE FUNCTION sileme.sileme_count_user_times_change();
CREATE TRIGGER sileme_count_user_times_truncate AFTER TRUNCATE ON public.users FOR EACH STATEMENT EXECUTE FUNCTION sileme.sileme_count_user_times_change();
CREATE TRIGGER sileme_count_user_times_update AFTER UPDATE OF time_zone, notify_time ON public.users FOR EACH ROW WHEN (((old.time_zone IS DISTINCT FROM new.time_zone) OR (old.notify_time IS DISTINCT FROM new.notify_time))) EXECUTE FUNCTION sileme.sileme_count_user_times_change();
CREATE TRIGGER sileme_note_contact AFTER INSERT OR UPDATE ON public.users FOR EACH ROW EXECUTE FUNCTION sileme.sileme_note_contact();
CREATE TRIGGER sileme_track_slot AFTER UPDATE OF time_zone, notify_time ON public.users FOR EACH ROW WHEN (((old.time_zone IS DISTINCT FROM new.time_zone) OR (old.notify_time IS DISTINCT FROM new.notify_time))) EXECUTE FUNCTION sileme.sileme_track_slot();
