-- 034: the canary (docs/operating.md, "The canary"). Every CANARY_EVERY the daemon sends a test
-- message through each relay to CANARY_ADDRESS, an address delivered into the bounce mailbox, and
-- expects it back within CANARY_WITHIN. A row a canary: the relay (its URL, as relay_counts names
-- it), the period it was sent for, when it was sent, came back or was found lost (and why).
-- (relay, period_start) is unique: several daemons claim a period with one INSERT … ON CONFLICT
-- DO NOTHING, and only the one that inserted sends.
CREATE TABLE IF NOT EXISTS sileme.canaries (
    id           BIGSERIAL PRIMARY KEY,
    relay        TEXT NOT NULL,
    period_start TIMESTAMPTZ NOT NULL,
    sent_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    back_at      TIMESTAMPTZ,
    lost_at      TIMESTAMPTZ,
    -- Why it was lost: not_back, bounced (with the report's status) or not_sent (with the reply).
    lost_reason  TEXT,
    UNIQUE (relay, period_start)
);
CREATE INDEX IF NOT EXISTS canaries_open ON sileme.canaries (sent_at) WHERE back_at IS NULL AND lost_at IS NULL;

-- Closed like the rest of the notifier's schema: nothing to PUBLIC; a role that runs the notifier
-- today (it may insert runs) keeps the canaries, as config/least-privilege.sql grants a new
-- installation's role.
DO $$
DECLARE
    target  text := current_setting('sileme_notifier.schema');
    grantee text;
BEGIN
    EXECUTE format('REVOKE ALL ON %I.canaries FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON SEQUENCE %I.canaries_id_seq FROM PUBLIC', target);
    FOR grantee IN
        SELECT DISTINCT a.grantee::regrole::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
        WHERE c.oid = format('%I.notifier_runs', target)::regclass AND a.privilege_type = 'INSERT'
          AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %I.canaries TO %s', target, grantee);
        EXECUTE format('GRANT USAGE ON SEQUENCE %I.canaries_id_seq TO %s', target, grantee);
    END LOOP;
END $$;
