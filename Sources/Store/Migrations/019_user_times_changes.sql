-- 019: every change of the users' times counted, so that the daemon's look a minute is one probe.
--
-- The daemon looks at every user's time each minute (docs/user-time.md), to learn of a new zone
-- or notify time without a restart. It read the distinct times with a skip scan of
-- users_slot_idx (014): one index probe per time — 23 ms at 3,840 times and a million users,
-- 1,440 times a day, as much server time as the run of everyone. Now a counter moves, in the
-- same transaction, with every change that can add or remove a time: a user added or removed
-- with a zone or a time, either of them changed. The daemon reads it in the snapshot it reads
-- the times in, and reads the times again only when it has moved.
--
-- A user with neither moves nothing (the service's time is always served), and a user whose
-- zone is written again unchanged neither (the triggers fire only on a real change), so the
-- counter's row is locked only by transactions that change a time — a traveller landing, a user
-- choosing another time — and only once in each: a statement changing many users' times moves it
-- once (`last_xact`).
CREATE TABLE IF NOT EXISTS sileme.user_times_changes (
    single    BOOLEAN PRIMARY KEY DEFAULT true CHECK (single),
    changes   BIGINT NOT NULL DEFAULT 0,
    last_xact xid8
);
INSERT INTO sileme.user_times_changes DEFAULT VALUES ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION sileme.sileme_count_user_times_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE user_times_changes SET changes = changes + 1, last_xact = pg_current_xact_id()
    WHERE last_xact IS DISTINCT FROM pg_current_xact_id();
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS sileme_count_user_times_insert ON users;
CREATE TRIGGER sileme_count_user_times_insert AFTER INSERT ON users
FOR EACH ROW WHEN (NEW.time_zone IS NOT NULL OR NEW.notify_time IS NOT NULL)
EXECUTE FUNCTION sileme.sileme_count_user_times_change();

DROP TRIGGER IF EXISTS sileme_count_user_times_update ON users;
CREATE TRIGGER sileme_count_user_times_update AFTER UPDATE OF time_zone, notify_time ON users
FOR EACH ROW WHEN (OLD.time_zone IS DISTINCT FROM NEW.time_zone OR OLD.notify_time IS DISTINCT FROM NEW.notify_time)
EXECUTE FUNCTION sileme.sileme_count_user_times_change();

DROP TRIGGER IF EXISTS sileme_count_user_times_delete ON users;
CREATE TRIGGER sileme_count_user_times_delete AFTER DELETE ON users
FOR EACH ROW WHEN (OLD.time_zone IS NOT NULL OR OLD.notify_time IS NOT NULL)
EXECUTE FUNCTION sileme.sileme_count_user_times_change();

DROP TRIGGER IF EXISTS sileme_count_user_times_truncate ON users;
CREATE TRIGGER sileme_count_user_times_truncate AFTER TRUNCATE ON users
FOR EACH STATEMENT EXECUTE FUNCTION sileme.sileme_count_user_times_change();

-- Closed like every object of the notifier's schema (013): the function runs as its owner with
-- its search path pinned, and nobody else may call it; the table is for nobody but the owner and
-- the roles that already read the summary (the least-privilege role of config/least-privilege.sql),
-- which may read it.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    app    text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass('users'));
    api    text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name   text;
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sileme_count_user_times_change() SET search_path = pg_catalog, %I, %I', target, target, app);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sileme_count_user_times_change() FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON %I.user_times_changes FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %I.user_times_changes FROM %I', target, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = format('%I.user_last_check_in', target)::regclass
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = 'SELECT'
    LOOP
        EXECUTE format('GRANT SELECT ON %I.user_times_changes TO %I', target, name);
    END LOOP;
END $$;
