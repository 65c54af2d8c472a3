-- 008: what the three guards of docs/guards.md read (future-dated check-ins, superseded accounts,
-- pause). Adds a column, indexes and counters only; no existing row changes. The triggers of 004 and
-- 005 stay as they are, so a check-in insert costs what it cost before.

-- Pause / travel mode: the app writes the last day the user is away (NULL: not paused).
ALTER TABLE users ADD COLUMN IF NOT EXISTS paused_until DATE;

-- Users whose pause ended recently become due from the pause's end: the due query range-scans this
-- (few rows: only users who ever paused are in it).
CREATE INDEX IF NOT EXISTS users_paused_until_idx ON users (paused_until) WHERE paused_until IS NOT NULL;

-- Other accounts with the same contact address (trimmed, case-insensitive): one probe per listed user.
CREATE INDEX IF NOT EXISTS users_contact_idx ON users (lower(btrim(emergency_email)));

-- The new decisions of a run, beside the counts of 003.
ALTER TABLE notifier_runs
    ADD COLUMN IF NOT EXISTS superseded     INTEGER,
    ADD COLUMN IF NOT EXISTS paused         INTEGER,
    ADD COLUMN IF NOT EXISTS cancelled      INTEGER,
    ADD COLUMN IF NOT EXISTS future_ignored INTEGER;
