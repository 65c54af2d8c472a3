-- A least-privilege database role for sileme-notifier (run as the owner of the tables, after
-- `sileme-notifier migrate`, which the owner runs). The daemon then connects as this role:
-- it reads users and check_ins, writes notification_logs and contact_status in the app's schema,
-- and its own state in the notifier's schema `sileme` (with DATABASE_SCHEMA set, replace `sileme`
-- in `sileme.` and `SCHEMA sileme` below by that name).
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
GRANT USAGE ON SCHEMA sileme TO sileme_notifier;

-- Read the app's data (and the summary the triggers keep, and which migrations are applied).
GRANT SELECT ON users, check_ins, emergency_contacts TO sileme_notifier;
GRANT SELECT ON sileme.user_last_check_in, sileme.sileme_schema_migrations TO sileme_notifier;
-- The count of changes of the users' times, which the daemon reads every minute.
GRANT SELECT ON sileme.user_times_changes TO sileme_notifier;

-- Write the notifier's own tables: claims, delivery state, runs. No DELETE, no TRUNCATE (with
-- RETENTION_DAYS set, grant DELETE ON notification_logs, notifier_runs to this role).
GRANT SELECT, INSERT, UPDATE ON notification_logs, sileme.notifier_runs, sileme.notifier_run_lock TO sileme_notifier;
-- The run lock's one row is released by deleting it.
GRANT DELETE ON sileme.notifier_run_lock TO sileme_notifier;
GRANT USAGE ON SEQUENCE notification_logs_id_seq, sileme.notifier_runs_id_seq TO sileme_notifier;
-- The lifecycle: contacts' deliverability (for the app to read), the introduced pairs, and the
-- all-clear queue the check-in trigger fills (entries are deleted once answered).
GRANT SELECT, INSERT, UPDATE ON contact_status, sileme.known_contacts TO sileme_notifier;
GRANT SELECT, DELETE ON sileme.pending_all_clears TO sileme_notifier;
-- The acknowledgement page (ACK_LISTEN) records a contact's "I'm on it"; nothing changes a row.
GRANT SELECT, INSERT ON sileme.acknowledgements TO sileme_notifier;
-- The bounces (BOUNCE_ADDRESS): each report read is recorded once; nothing changes an event.
GRANT SELECT, INSERT ON sileme.bounce_events TO sileme_notifier;
-- The bounce reader's own record (when it last read the mailbox, its counts), one row it updates.
GRANT SELECT, INSERT, UPDATE ON sileme.bounce_mailbox TO sileme_notifier;
-- Escalation (ESCALATE_AFTER): the daemon moves each alerted streak's stage, the page records
-- its outcome; the rows are made by the notifier's trigger when an alert is accepted.
GRANT SELECT, UPDATE ON sileme.escalations TO sileme_notifier;
-- Its streaks older than RETENTION_DAYS are deleted with the rest (the role may already settle any
-- streak: deleting an old one gives it nothing new); the counts of the steps made are read, never written.
GRANT DELETE ON sileme.escalations TO sileme_notifier;
GRANT SELECT ON sileme.escalation_tally TO sileme_notifier;
-- The check-in queue: the app's insert trigger appends, the notifier folds it into the summary
-- (the function runs as its owner; the role only reads the queue to say what a standby has not
-- folded, and for `check`'s backlog line).
GRANT SELECT ON sileme.check_in_queue TO sileme_notifier;
GRANT EXECUTE ON FUNCTION sileme.sileme_fold_check_ins() TO sileme_notifier;
-- The intake guard: each day's intake (the fold keeps it) and the alerts held over a gap.
GRANT SELECT ON sileme.daily_intake TO sileme_notifier;
GRANT SELECT, INSERT, UPDATE ON sileme.held_alerts TO sileme_notifier;
-- The relays' counts (SMTP_FALLBACK): the mail each accepted, the messages that passed it over.
GRANT SELECT, INSERT, UPDATE ON sileme.relay_counts TO sileme_notifier;
-- The canaries (CANARY_EVERY): a row a test message through a relay, claimed, sent, back or lost.
GRANT SELECT, INSERT, UPDATE ON sileme.canaries TO sileme_notifier;
GRANT USAGE ON SEQUENCE sileme.canaries_id_seq TO sileme_notifier;

-- Row-level security (the app may turn it on, as the design doc does for users and check_ins;
-- `migrate` turns it on for emergency_contacts and contact_status): the role reads every row
-- through a policy of its own, and writes the rows of the tables it keeps. Harmless where row
-- security is off; without it, the notifier refuses to run rather than see nobody.
DO $$
DECLARE
    t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['users', 'check_ins', 'emergency_contacts'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = t::regclass AND polname = 'sileme_notifier_read') THEN
            EXECUTE format('CREATE POLICY sileme_notifier_read ON %I FOR SELECT TO sileme_notifier USING (true)', t);
        END IF;
    END LOOP;
    FOREACH t IN ARRAY ARRAY['notification_logs', 'contact_status'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = t::regclass AND polname = 'sileme_notifier_all') THEN
            EXECUTE format('CREATE POLICY sileme_notifier_all ON %I FOR ALL TO sileme_notifier USING (true) WITH CHECK (true)', t);
        END IF;
    END LOOP;
END $$;

-- user_last_check_in.last_notified_date is kept by a SECURITY DEFINER trigger on
-- notification_logs: the role needs no write access to the summary. pg_stat_activity's pid column
-- (used to take over claims of crashed runs on direct connections) needs no grant.
