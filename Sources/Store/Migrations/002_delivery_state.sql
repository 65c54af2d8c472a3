-- 002: delivery state on notification_logs and the claim key (docs/data.md, docs/delivery.md).
-- Adds columns only; existing rows keep their values (their new columns stay NULL/0, and a row
-- with status NULL is a row written before this migration: `email_sent` alone says what happened).
ALTER TABLE notification_logs
    ADD COLUMN IF NOT EXISTS status             TEXT,
    ADD COLUMN IF NOT EXISTS attempts           INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS last_error         TEXT,
    ADD COLUMN IF NOT EXISTS last_reply         TEXT,
    ADD COLUMN IF NOT EXISTS next_attempt_at    TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS sent_at            TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS message_id         TEXT,
    ADD COLUMN IF NOT EXISTS claimed_by         TEXT,
    ADD COLUMN IF NOT EXISTS claim_backend_pid  INTEGER,
    ADD COLUMN IF NOT EXISTS claimed_at         TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS last_check_in_date DATE,
    ADD COLUMN IF NOT EXISTS recipient_masked   TEXT,
    ADD COLUMN IF NOT EXISTS run_id             BIGINT,
    ADD COLUMN IF NOT EXISTS updated_at         TIMESTAMPTZ;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'notification_logs_status_check') THEN
        ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_status_check
            CHECK (status IN ('sending', 'sent', 'retry', 'failed', 'skipped'));
    END IF;
END $$;

-- The claim key: one row per user and notification date. Existing duplicates are never deleted:
-- the migration stops and says how many there are, for an operator to resolve.
DO $$
DECLARE
    duplicates BIGINT;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'notification_logs_user_date_key') THEN
        SELECT count(*) INTO duplicates FROM (
            SELECT 1 FROM notification_logs GROUP BY user_id, notification_date HAVING count(*) > 1
        ) d;
        IF duplicates > 0 THEN
            RAISE EXCEPTION 'notification_logs has % (user_id, notification_date) pairs with more than one row; resolve them before migrating (nothing was changed)', duplicates;
        END IF;
        CREATE UNIQUE INDEX notification_logs_user_date_key ON notification_logs (user_id, notification_date);
    END IF;
END $$;

-- Rows that still need work (retries, claims), found without scanning the history.
CREATE INDEX IF NOT EXISTS notification_logs_open_idx ON notification_logs (notification_date, status)
    WHERE status IN ('sending', 'retry', 'failed');
