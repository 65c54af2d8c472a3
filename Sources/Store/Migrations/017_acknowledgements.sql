-- 017: a contact can say "I'm on it" (docs/acknowledgement.md). The acknowledgement
-- page records one row per (streak, contact) when the contact presses its button; the lifecycle
-- then owes every other contact that got the alert one `acknowledged` notice, threaded under the
-- alert, and the streak's follow-up is no longer sent.
--
-- The streak is named as its alert rows name it: the user and the alert's `notification_date`.
-- `contact` is the delivery key's form of the address (trimmed, lower-cased), as in
-- notification_logs. Only the page's POST writes here (a mail scanner's GET changes nothing), and
-- a second press of the same contact finds its row and changes nothing (the primary key).
CREATE TABLE IF NOT EXISTS sileme.acknowledgements (
    user_id            UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    alert_date         DATE NOT NULL,
    contact            TEXT NOT NULL,
    last_check_in_date DATE NOT NULL,
    acknowledged_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, alert_date, contact)
);
-- The daemon's pass reads the recent ones (the notices still owed, the history report's counts).
CREATE INDEX IF NOT EXISTS acknowledgements_at_idx ON sileme.acknowledgements (acknowledged_at);

-- The new kind of message. NOT VALID, then VALIDATE: the check of the existing rows takes no lock
-- that stops the app or a run from writing notification_logs meanwhile.
ALTER TABLE notification_logs DROP CONSTRAINT IF EXISTS notification_logs_kind_check;
ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_kind_check
    CHECK (kind IN ('alert', 'all_clear', 'follow_up', 'introduction', 'reminder', 'acknowledged')) NOT VALID;
ALTER TABLE notification_logs VALIDATE CONSTRAINT notification_logs_kind_check;

-- Closed like every object of the notifier's schema (013): nothing for PUBLIC or an API role;
-- the roles that already use the notifier's tables (the least-privilege role of
-- config/least-privilege.sql) may read and insert acknowledgements, as the page does.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    api    text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name   text;
BEGIN
    EXECUTE format('REVOKE ALL ON %I.acknowledgements FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %I.acknowledgements FROM %I', target, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = format('%I.known_contacts', target)::regclass
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = 'INSERT'
    LOOP
        EXECUTE format('GRANT SELECT, INSERT ON %I.acknowledgements TO %I', target, name);
    END LOOP;
END $$;
