-- 027: escalation in the history report, the metrics and retention (docs/escalation.md).

-- The history report reads a period's streaks by alert date, and retention deletes the streaks
-- dated before its cutoff, oldest first: both a range read of this index (the primary key leads
-- with the user, and `escalations_escalated_idx` holds the escalated streaks only).
CREATE INDEX IF NOT EXISTS escalations_date_idx ON sileme.escalations (alert_date);

-- The metrics' counters of escalations made and streaks declared unheard. Counted as the steps
-- are made rather than from the streaks' rows, because retention deletes old rows and a counter
-- must never go down (Prometheus would read a drop as a restart). One row; each step adds one
-- to it in the step's own transaction (a step is made once, by one daemon: 024).
CREATE TABLE IF NOT EXISTS sileme.escalation_tally (
    single    BOOLEAN PRIMARY KEY DEFAULT true CHECK (single),
    escalated BIGINT NOT NULL DEFAULT 0,
    unheard   BIGINT NOT NULL DEFAULT 0
);
-- Starts from the steps already recorded (an installation that escalated before this migration).
INSERT INTO sileme.escalation_tally (escalated, unheard)
SELECT count(*) FILTER (WHERE escalated_at IS NOT NULL), count(*) FILTER (WHERE unheard_at IS NOT NULL) FROM sileme.escalations
ON CONFLICT DO NOTHING;

-- Runs as its owner: the notifier's role reads the tally and never writes it.
CREATE OR REPLACE FUNCTION sileme.sileme_count_escalation_step() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
    UPDATE escalation_tally
       SET escalated = escalated + (NEW.escalated_at IS NOT NULL AND OLD.escalated_at IS NULL)::int,
           unheard   = unheard + (NEW.unheard_at IS NOT NULL AND OLD.unheard_at IS NULL)::int;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS sileme_count_escalation_step ON sileme.escalations;
CREATE TRIGGER sileme_count_escalation_step AFTER UPDATE OF escalated_at, unheard_at ON sileme.escalations
FOR EACH ROW WHEN ((NEW.escalated_at IS NOT NULL AND OLD.escalated_at IS NULL) OR (NEW.unheard_at IS NOT NULL AND OLD.unheard_at IS NULL))
EXECUTE FUNCTION sileme.sileme_count_escalation_step();

-- Closed like every object of the notifier's schema (013, 024): the function runs as its owner
-- with its search path pinned, and nobody else may call it; nothing of the tally for PUBLIC or an
-- API role. The roles that may move the streaks (024) may read the tally, and delete streaks (the
-- retention of old ones: they may already settle any streak, so this gives them nothing new).
DO $$
DECLARE
    target text := current_setting('sileme_notifier.schema');
    api    text[] := ARRAY(SELECT rolname::text FROM pg_roles WHERE rolname IN ('anon', 'authenticated', 'service_role'));
    name   text;
BEGIN
    EXECUTE format('ALTER FUNCTION %I.sileme_count_escalation_step() SET search_path = pg_catalog, %I', target, target);
    EXECUTE format('REVOKE ALL ON FUNCTION %I.sileme_count_escalation_step() FROM PUBLIC', target);
    EXECUTE format('REVOKE ALL ON %I.escalation_tally FROM PUBLIC', target);
    FOREACH name IN ARRAY api LOOP
        EXECUTE format('REVOKE ALL ON %I.escalation_tally FROM %I', target, name);
    END LOOP;
    FOR name IN
        SELECT DISTINCT r.rolname::text
        FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = format('%I.escalations', target)::regclass
          AND a.grantee <> c.relowner AND r.rolname <> ALL (api) AND a.privilege_type = 'UPDATE'
    LOOP
        EXECUTE format('GRANT SELECT ON %I.escalation_tally TO %I', target, name);
        EXECUTE format('GRANT DELETE ON %I.escalations TO %I', target, name);
    END LOOP;
END $$;
