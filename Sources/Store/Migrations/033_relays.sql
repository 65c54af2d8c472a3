-- 033: fallback relays (docs/delivery.md, "Fallback relays"). Each sent mail records the relay
-- that accepted it (`SMTP_HOST`'s URL, or one of `SMTP_FALLBACK`'s), so that the history report
-- and the metrics count the mail per relay and an operator sees when the fallback carried the
-- morning. Nullable, no default: adding it rewrites nothing; rows from before, webhook events and
-- the outbox's mail have none.
ALTER TABLE notification_logs ADD COLUMN IF NOT EXISTS relay TEXT;

-- The relays' counts, a row a relay (its URL): the mail each accepted, and how often a message
-- passed it over because it failed as a relay — what the metrics file shows per relay. Written
-- by the statement that records the sent rows (once per row) and, for the rare failover, beside it.
CREATE TABLE IF NOT EXISTS sileme.relay_counts (
    relay       TEXT PRIMARY KEY,
    accepted    BIGINT NOT NULL DEFAULT 0,
    passed_over BIGINT NOT NULL DEFAULT 0,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Closed like the rest of the notifier's schema: nothing to PUBLIC; a role that runs the notifier
-- today (it may insert runs) keeps the counts, as config/least-privilege.sql grants a new
-- installation's role.
DO $$
DECLARE
    target  text := current_setting('sileme_notifier.schema');
    grantee text;
BEGIN
    EXECUTE format('REVOKE ALL ON %I.relay_counts FROM PUBLIC', target);
    FOR grantee IN
        SELECT DISTINCT a.grantee::regrole::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
        WHERE c.oid = format('%I.notifier_runs', target)::regclass AND a.privilege_type = 'INSERT'
          AND a.grantee <> 0 AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON %I.relay_counts TO %s', target, grantee);
    END LOOP;
END $$;
