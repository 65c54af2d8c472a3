-- 022: bounces (docs/bounces.md). A relay's `250` says only that it took the mail; a dead mailbox
-- is reported minutes later to the message's envelope sender, which names the delivery row. The
-- notifier reads those reports and keeps what they said here.
--
-- A mail whose report says the address is dead is `bounced`: it stays a mail that went out
-- (`email_sent` stays true — the streak was alerted, nothing is resent to anyone), and the
-- report's status code, diagnostic and arrival are kept beside it. Only a `sent` mail becomes
-- `bounced`, and only once.
ALTER TABLE notification_logs
    ADD COLUMN IF NOT EXISTS bounced_at        TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS bounce_status     TEXT,
    ADD COLUMN IF NOT EXISTS bounce_diagnostic TEXT;

-- The new status. NOT VALID, then VALIDATE: the check of the existing rows takes no lock that
-- stops the app or a run from writing notification_logs meanwhile.
ALTER TABLE notification_logs DROP CONSTRAINT IF EXISTS notification_logs_status_check;
ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_status_check
    CHECK (status IN ('sending', 'sent', 'retry', 'failed', 'skipped', 'bounced')) NOT VALID;
ALTER TABLE notification_logs VALIDATE CONSTRAINT notification_logs_status_check;

-- Every report acted on or kept aside, once: `report` is the SHA-256 of the message as it lay in
-- the mailbox, so a report read again (a crash between the commit and its removal) finds its row
-- and changes nothing. What the history report counts, per day and per recipient domain: a
-- permanent failure, a transient one, a complaint, or a report that names no delivery row of
-- ours (`unmatched`: a forged or unknown tag, another system's mail). `log_id` names the delivery
-- row (no foreign key: retention deletes old rows, the counts stay).
CREATE TABLE IF NOT EXISTS sileme.bounce_events (
    report      TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('permanent', 'transient', 'complaint', 'unmatched')),
    domain      TEXT NOT NULL DEFAULT '',
    log_id      BIGINT,
    status_code TEXT,
    diagnostic  TEXT,
    received_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS bounce_events_received_idx ON sileme.bounce_events (received_at);

-- Closed like every object of the notifier's schema (013): nothing for PUBLIC or an API role (a
-- forged event would mark a family's contact dead); the roles that already keep the notifier's
-- contacts (the least-privilege role of config/least-privilege.sql) may read and insert events.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    api    text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name   text;
BEGIN
    EXECUTE format('REVOKE ALL ON %I.bounce_events FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %I.bounce_events FROM %I', target, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = format('%I.known_contacts', target)::regclass
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = 'INSERT'
    LOOP
        EXECUTE format('GRANT SELECT, INSERT ON %I.bounce_events TO %I', target, name);
    END LOOP;
END $$;
