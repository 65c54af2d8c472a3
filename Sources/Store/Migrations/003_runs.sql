-- 003: one row per run (daemon, timer, by hand), for catch-up and for admins.
CREATE TABLE IF NOT EXISTS notifier_runs (
    id               BIGSERIAL PRIMARY KEY,
    run_date         DATE NOT NULL,
    mode             TEXT NOT NULL,
    host             TEXT NOT NULL,
    pid              INTEGER NOT NULL,
    started_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at      TIMESTAMPTZ,
    status           TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
    due              INTEGER,
    sent             INTEGER,
    failed           INTEGER,
    already_notified INTEGER,
    stale            INTEGER,
    invalid_email    INTEGER,
    invalid_name     INTEGER,
    busy_elsewhere   INTEGER,
    error            TEXT
);

CREATE INDEX IF NOT EXISTS notifier_runs_date_idx ON notifier_runs (run_date, status);

-- The batch query looks up each user's check-ins by (user_id, check_in_date); the design doc's
-- unique constraint already provides that index. Add one only where the app's database lacks it.
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_index i
        JOIN pg_attribute a1 ON a1.attrelid = i.indrelid AND a1.attnum = i.indkey[0]
        JOIN pg_attribute a2 ON a2.attrelid = i.indrelid AND a2.attnum = i.indkey[1]
        WHERE i.indrelid = 'check_ins'::regclass AND a1.attname = 'user_id' AND a2.attname = 'check_in_date'
    ) THEN
        CREATE INDEX check_ins_user_date_idx ON check_ins (user_id, check_in_date);
    END IF;
END $$;
