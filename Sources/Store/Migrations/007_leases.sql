-- 007: claims and the run lock that depend on no database session, so that the notifier works
-- through a connection pooler (PgBouncer, Supabase's pooler) and a killed run never blocks the
-- next one (docs/delivery.md, "Claims and the run lock").
--
-- A claim (`status = 'sending'`) may be taken over once its lease has run out (`claimed_at` older
-- than CLAIM_LEASE_SECONDS; the run renews the lease of its claims while it sends), or at once
-- when it was made on a direct connection (`claim_backend_pid` set) whose session is gone.
-- Through a pooler the backend pid belongs to a pooled server connection that outlives the
-- client, so such claims record no pid and only the lease decides.
CREATE INDEX IF NOT EXISTS notification_logs_claimed_by_idx ON notification_logs (claimed_by)
    WHERE status = 'sending';

-- The run lock: one row, held by one run at a time. It is free when its lease has run out or when
-- its holder's direct session is gone (holder_backend_pid set and no longer in pg_stat_activity).
CREATE TABLE IF NOT EXISTS notifier_run_lock (
    id                 SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    holder             TEXT NOT NULL,
    holder_backend_pid INTEGER,
    acquired_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at         TIMESTAMPTZ NOT NULL
);

-- Users deleted (or otherwise gone) between a run's evaluation and its claim, counted per run.
ALTER TABLE notifier_runs ADD COLUMN IF NOT EXISTS gone INTEGER;
ALTER TABLE notifier_runs ADD COLUMN IF NOT EXISTS claim_errors INTEGER;
