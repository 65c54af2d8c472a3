-- 023: what a bounce changes beyond its row (docs/bounces.md), and what the bounce reader says of
-- itself.
--
-- A mail that bounced for good owes the app one `contact.undeliverable` webhook event per streak
-- and contact: a delivery row of the new kind `undeliverable`, on the webhook channel only, keyed
-- like every row (its contact is the dead address). NOT VALID, then VALIDATE: the check of the
-- existing rows takes no lock that stops the app or a run from writing notification_logs meanwhile.
ALTER TABLE notification_logs DROP CONSTRAINT IF EXISTS notification_logs_kind_check;
ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_kind_check
    CHECK (kind IN ('alert', 'all_clear', 'follow_up', 'introduction', 'reminder', 'acknowledged', 'undeliverable')) NOT VALID;
ALTER TABLE notification_logs VALIDATE CONSTRAINT notification_logs_kind_check;

-- The reader's own record, one row: when it last listed the mailbox, when a poll last failed, and
-- its counts since the mailbox was first read (reports read, rows bounced, messages kept aside,
-- failed polls) — what `check` and the metrics file say, whichever process asks. Written by the
-- reader after a poll that found messages or failed, and otherwise at most every few minutes
-- (an empty poll opens no database session).
CREATE TABLE IF NOT EXISTS sileme.bounce_mailbox (
    id          BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
    read_at     TIMESTAMPTZ,
    failed_at   TIMESTAMPTZ,
    reports     BIGINT NOT NULL DEFAULT 0,
    bounced     BIGINT NOT NULL DEFAULT 0,
    kept_aside  BIGINT NOT NULL DEFAULT 0,
    failures    BIGINT NOT NULL DEFAULT 0,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Closed like every object of the notifier's schema (013): nothing for PUBLIC or an API role; the
-- roles that already record bounce events (the least-privilege role of config/least-privilege.sql)
-- may read and write the reader's record.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    api    text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name   text;
BEGIN
    EXECUTE format('REVOKE ALL ON %I.bounce_mailbox FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %I.bounce_mailbox FROM %I', target, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = format('%I.bounce_events', target)::regclass
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = 'INSERT'
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %I.bounce_mailbox TO %I', target, name);
    END LOOP;
END $$;
