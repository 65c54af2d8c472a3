-- 010: the alert lifecycle (docs/lifecycle.md): several contacts per user, delivery state per
-- (user, date, kind, channel, contact), the all-clear queue fed by the check-in trigger, the
-- contacts' deliverability for the app, and the pairs already introduced.
--
-- Rows written before this migration stay valid: each is an `alert` by `email` to the one contact
-- the user had (`users.emergency_email`, backfilled below).

-- Up to 5 contacts per user, written by the app (served by `position`, then `id`). A user without
-- rows here is served by `users.emergency_email`.
CREATE TABLE IF NOT EXISTS emergency_contacts (
    id         BIGSERIAL PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    position   SMALLINT NOT NULL DEFAULT 1,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS emergency_contacts_user_email_key ON emergency_contacts (user_id, lower(email));

-- What a row is: its kind, its channel and its contact (the address, trimmed and lower-cased: the
-- key; '' where the row names no contact). `in_reply_to` is the Message-ID of the alert an
-- all-clear or a follow-up answers; `event_at` when the check-in that cleared the streak came.
ALTER TABLE notification_logs
    ADD COLUMN IF NOT EXISTS kind        TEXT NOT NULL DEFAULT 'alert',
    ADD COLUMN IF NOT EXISTS channel     TEXT NOT NULL DEFAULT 'email',
    ADD COLUMN IF NOT EXISTS contact     TEXT,
    ADD COLUMN IF NOT EXISTS in_reply_to TEXT,
    ADD COLUMN IF NOT EXISTS event_at    TIMESTAMPTZ;

LOCK TABLE notification_logs IN SHARE ROW EXCLUSIVE MODE;
UPDATE notification_logs n SET contact = coalesce(lower(btrim(u.emergency_email)), '')
FROM users u WHERE u.id = n.user_id AND n.contact IS NULL;
UPDATE notification_logs SET contact = '' WHERE contact IS NULL;
ALTER TABLE notification_logs ALTER COLUMN contact SET DEFAULT '', ALTER COLUMN contact SET NOT NULL;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'notification_logs_kind_check') THEN
        ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_kind_check
            CHECK (kind IN ('alert', 'all_clear', 'follow_up', 'introduction', 'reminder'));
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'notification_logs_channel_check') THEN
        ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_channel_check
            CHECK (channel IN ('email', 'webhook'));
    END IF;
END $$;

-- The claim key, per (user, date, kind, channel, contact): one contact's failure never resends to
-- another. The old key (user, date) is a prefix of it, and its lookups use this index.
CREATE UNIQUE INDEX IF NOT EXISTS notification_logs_delivery_key
    ON notification_logs (user_id, notification_date, kind, channel, contact);
DROP INDEX IF EXISTS notification_logs_user_date_key;

-- "Once per streak" counts accepted alerts only (an all-clear or an introduction is no alert).
CREATE OR REPLACE FUNCTION sileme_track_last_notified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
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
END $$;

CREATE OR REPLACE FUNCTION sileme_fill_last_notified() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    NEW.last_notified_date := (SELECT max(notification_date) FROM notification_logs
                               WHERE user_id = NEW.user_id AND email_sent AND kind = 'alert');
    RETURN NEW;
END $$;

-- All clear. A check-in that ends a streak whose alert was accepted (the summary's latest accepted
-- alert is after its latest check-in) queues the user and wakes a listening daemon. The summary
-- row's update says so itself (`cleared_after`: the streak's last check-in), so a check-in that
-- ends no alerted streak costs nothing more than before.
ALTER TABLE user_last_check_in ADD COLUMN IF NOT EXISTS cleared_after DATE;

CREATE TABLE IF NOT EXISTS pending_all_clears (
    user_id       UUID PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    streak_after  DATE NOT NULL,
    check_in_date DATE NOT NULL,
    checked_in_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION sileme_track_last_check_in() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
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
        INSERT INTO user_last_check_in AS s (user_id, last_check_in_date)
        VALUES (NEW.user_id, NEW.check_in_date)
        ON CONFLICT (user_id) DO UPDATE
            SET last_check_in_date = EXCLUDED.last_check_in_date,
                cleared_after = CASE WHEN s.last_notified_date > s.last_check_in_date THEN s.last_check_in_date END
            WHERE s.last_check_in_date < EXCLUDED.last_check_in_date
        RETURNING s.cleared_after INTO cleared;
        IF cleared IS NOT NULL THEN
            INSERT INTO pending_all_clears (user_id, streak_after, check_in_date)
            VALUES (NEW.user_id, cleared, NEW.check_in_date)
            ON CONFLICT (user_id) DO NOTHING;
            PERFORM pg_notify('sileme_check_in', NEW.user_id::text);
        END IF;
    END IF;
    RETURN NULL;
END $$;

-- Deliverability of each contact, for the app to show its user: `undeliverable` after a
-- "no such user" refusal, `ok` after an accepted mail.
CREATE TABLE IF NOT EXISTS contact_status (
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('ok', 'undeliverable')),
    last_reply TEXT,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, email)
);

-- Introductions: every (user, contact) pair the notifier has seen. A new pair is `pending` until
-- its introduction is sent; pairs that exist now are `existing` (not mailed unless the operator
-- runs `sileme-notifier introduce --existing`).
CREATE TABLE IF NOT EXISTS known_contacts (
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    contact    TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'introduced', 'existing', 'not_introduced')),
    first_seen TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, contact)
);
CREATE INDEX IF NOT EXISTS known_contacts_pending_idx ON known_contacts (first_seen) WHERE state = 'pending';

CREATE OR REPLACE FUNCTION sileme_note_contact() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
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
END $$;

DROP TRIGGER IF EXISTS sileme_note_contact ON users;
CREATE TRIGGER sileme_note_contact
    AFTER INSERT OR UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION sileme_note_contact();
DROP TRIGGER IF EXISTS sileme_note_contact ON emergency_contacts;
CREATE TRIGGER sileme_note_contact
    AFTER INSERT OR UPDATE ON emergency_contacts
    FOR EACH ROW EXECUTE FUNCTION sileme_note_contact();

LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE emergency_contacts IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO known_contacts (user_id, contact, state)
SELECT id, lower(btrim(emergency_email)), 'existing' FROM users
WHERE emergency_email IS NOT NULL AND btrim(emergency_email) <> ''
UNION
SELECT user_id, lower(btrim(email)), 'existing' FROM emergency_contacts WHERE btrim(email) <> ''
ON CONFLICT DO NOTHING;

-- Accepted alerts by date: the all-clear sweep and the follow-ups read recent ones.
CREATE INDEX IF NOT EXISTS notification_logs_alerts_idx ON notification_logs (notification_date)
    WHERE email_sent AND kind = 'alert';
