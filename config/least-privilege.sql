-- A least-privilege database role for sileme-notifier (run as the owner of the tables, after
-- `sileme-notifier migrate`, which the owner runs). The daemon then connects as this role:
-- it reads users and check_ins, writes only notification_logs and notifier_runs.
--   psql -v ON_ERROR_STOP=1 -d sileme -f config/least-privilege.sql
--   ALTER ROLE sileme_notifier PASSWORD '…';    -- or use peer/cert authentication
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'sileme_notifier') THEN
        CREATE ROLE sileme_notifier LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
    END IF;
END $$;

DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO sileme_notifier', current_database()); END $$;
GRANT USAGE ON SCHEMA public TO sileme_notifier;

-- Read the app's data (and the summary the triggers keep, and which migrations are applied).
GRANT SELECT ON users, check_ins, user_last_check_in, sileme_schema_migrations TO sileme_notifier;

-- Write the notifier's own tables: claims, delivery state, runs. No DELETE, no TRUNCATE.
GRANT SELECT, INSERT, UPDATE ON notification_logs, notifier_runs TO sileme_notifier;
GRANT USAGE ON SEQUENCE notification_logs_id_seq, notifier_runs_id_seq TO sileme_notifier;

-- user_last_check_in.last_notified_date is kept by a SECURITY DEFINER trigger on
-- notification_logs: the role needs no write access to the summary. pg_stat_activity's pid column
-- (used to take over claims of crashed runs) and advisory locks need no grant.
