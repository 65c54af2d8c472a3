-- 029: several daemons share an instant's sending (docs/delivery.md). The daemon that holds the
-- run lock decides everything a run decides — the guards, the skips, the holds — then marks its
-- run `sending_since` with the number of messages it streams (`sending_jobs`); a daemon that finds
-- the lock taken joins that run: it reads the same due set from its other end and sends what it
-- claims, under a run row of its own (mode `daemon-join`, `joined_run` naming the run it helped).
-- Nullable, no default: adding them rewrites nothing.
ALTER TABLE sileme.notifier_runs ADD COLUMN IF NOT EXISTS sending_since TIMESTAMPTZ;
ALTER TABLE sileme.notifier_runs ADD COLUMN IF NOT EXISTS sending_jobs INTEGER;
ALTER TABLE sileme.notifier_runs ADD COLUMN IF NOT EXISTS joined_run BIGINT;
