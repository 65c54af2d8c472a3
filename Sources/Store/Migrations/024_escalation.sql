-- 024: escalation (docs/escalation.md). An alert nobody hears — no contact pressed "I'm on it",
-- the user did not check in — `ESCALATE_AFTER` after it first went out escalates (an `escalation`
-- notice to the first tier, the first alert to the second), and one still unheard as long again is
-- declared unheard. A contact who went can say how it ended (an outcome).

-- The contact's tier, written by the app: 1 is told at once, 2 ("only if nobody answers", a
-- neighbour) gets the alert only when it escalates. Two tiers and no more: a third would need its
-- own step, and a CHECK keeps a typo of the app's (0, 3) from hiding a contact from every alert.
-- A constant default adds the column without rewriting the table; NOT VALID, then VALIDATE: the
-- check of the existing rows takes no lock that stops the app from writing contacts meanwhile.
ALTER TABLE emergency_contacts ADD COLUMN IF NOT EXISTS tier SMALLINT NOT NULL DEFAULT 1;
ALTER TABLE emergency_contacts DROP CONSTRAINT IF EXISTS emergency_contacts_tier_check;
ALTER TABLE emergency_contacts ADD CONSTRAINT emergency_contacts_tier_check CHECK (tier IN (1, 2)) NOT VALID;
ALTER TABLE emergency_contacts VALIDATE CONSTRAINT emergency_contacts_tier_check;

-- The new kinds of message: the `escalation` notice, `unheard` (the webhook only), and the two
-- outcome notices. Added to whatever kinds the earlier migrations allow (read from the constraint
-- itself, so that a migration adding another kind beside this one keeps it).
DO $$
DECLARE
    kinds text[];
BEGIN
    SELECT array_agg(DISTINCT k ORDER BY k) INTO kinds FROM (
        SELECT (regexp_matches(pg_get_constraintdef(oid), '''([a-z_]+)''', 'g'))[1] AS k
        FROM pg_constraint WHERE conrelid = 'notification_logs'::regclass AND conname = 'notification_logs_kind_check'
        UNION SELECT unnest(ARRAY['escalation', 'unheard', 'outcome_ok', 'outcome_unreachable'])
    ) known;
    ALTER TABLE notification_logs DROP CONSTRAINT IF EXISTS notification_logs_kind_check;
    EXECUTE format('ALTER TABLE notification_logs ADD CONSTRAINT notification_logs_kind_check CHECK (kind = ANY (%L::text[])) NOT VALID',
                   kinds);
END $$;
ALTER TABLE notification_logs VALIDATE CONSTRAINT notification_logs_kind_check;

-- One row per alerted streak (named, as everywhere, by the user and the alert's date), made when
-- its first e-mail alert is accepted: where the streak stands on the way to being heard.
--
-- `clock_at` is when `ESCALATE_AFTER` began to count towards the next step: the first alert's
-- acceptance, then the escalation; `-infinity` when the next step is owed at once (every contact's
-- alert bounced, or a contact said they could not reach the user). So "which streaks are due a
-- step now" is one probe of the partial index below — `clock_at <= now() - ESCALATE_AFTER` — and
-- finds nothing, cheaply, when nothing is due. Whether a streak found there was heard meanwhile
-- (an acknowledgement, a check-in) is read then; a heard one is marked so and never found again.
--
-- Each step is a move of `stage` made only from the stage before it (`UPDATE … WHERE stage = …`),
-- so of two daemons only one makes it, and only the one that made it queues its messages (whose
-- delivery keys are unique besides). The outcome is recorded once per streak, by whoever is first.
--
-- Alerts accepted before this migration have no row: an upgrade sends no escalation about alerts
-- whose families may long since have acted.
CREATE TABLE IF NOT EXISTS sileme.escalations (
    user_id            UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    alert_date         DATE NOT NULL,
    last_check_in_date DATE NOT NULL,
    first_sent_at      TIMESTAMPTZ NOT NULL,
    clock_at           TIMESTAMPTZ NOT NULL,
    stage              TEXT NOT NULL DEFAULT 'alerted'
                       CHECK (stage IN ('alerted', 'escalated', 'unheard', 'heard', 'closed')),
    escalated_at       TIMESTAMPTZ,
    unheard_at         TIMESTAMPTZ,
    heard_at           TIMESTAMPTZ,
    outcome            TEXT CHECK (outcome IN ('ok', 'unreachable')),
    outcome_contact    TEXT,
    outcome_at         TIMESTAMPTZ,
    PRIMARY KEY (user_id, alert_date),
    CHECK ((outcome IS NULL) = (outcome_at IS NULL) AND (outcome IS NULL) = (outcome_contact IS NULL))
);
CREATE INDEX IF NOT EXISTS escalations_due_idx ON sileme.escalations (clock_at) WHERE stage IN ('alerted', 'escalated');
-- The messages an escalated streak owes (its notices and events, retried until settled) are read
-- by date from the escalated and unheard streaks alone.
CREATE INDEX IF NOT EXISTS escalations_escalated_idx ON sileme.escalations (alert_date) WHERE stage IN ('escalated', 'unheard');

-- Whoever records an accepted alert (a run, a retry, a takeover after a crash) makes the streak's
-- row; a bounce that leaves no accepted alert of the streak standing makes its escalation due at
-- once. Runs as its owner: the notifier's role writes `notification_logs`, never this table's rows
-- directly.
CREATE OR REPLACE FUNCTION sileme.sileme_watch_alert() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
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
END $$;

DROP TRIGGER IF EXISTS sileme_watch_alert ON notification_logs;
CREATE TRIGGER sileme_watch_alert AFTER INSERT OR UPDATE OF email_sent, status ON notification_logs
FOR EACH ROW WHEN (NEW.kind = 'alert' AND NEW.channel = 'email' AND NEW.contact <> '' AND (NEW.email_sent OR NEW.status = 'bounced'))
EXECUTE FUNCTION sileme.sileme_watch_alert();

-- Closed like every object of the notifier's schema (013): the function runs as its owner with
-- its search path pinned, and nobody else may call it; nothing of the table for PUBLIC or an API
-- role (a forged row would silence a streak's escalation). The roles that already keep the
-- notifier's contacts (the least-privilege role of config/least-privilege.sql) may read the
-- streaks and move them (the daemon's steps, the page's outcomes); rows are made by the trigger.
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    app    text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass('users'));
    api    text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name   text;
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sileme_watch_alert() SET search_path = pg_catalog, %I, %I', target, target, app);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sileme_watch_alert() FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON %I.escalations FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %I.escalations FROM %I', target, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = format('%I.known_contacts', target)::regclass
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = 'INSERT'
    LOOP
        EXECUTE format('GRANT SELECT, UPDATE ON %I.escalations TO %I', target, name);
    END LOOP;
END $$;
