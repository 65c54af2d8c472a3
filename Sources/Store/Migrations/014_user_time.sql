-- 014: each user's own time (docs/user-time.md). The app writes the device's IANA zone name and
-- the time the user chose for their contacts to be told; NULL means NOTIFY_TIME_ZONE and
-- NOTIFY_TIME. The notifier only reads them, and never trusts a name: one the zone database does
-- not know counts as NULL for that user.
ALTER TABLE users ADD COLUMN IF NOT EXISTS time_zone TEXT;
ALTER TABLE users ADD COLUMN IF NOT EXISTS notify_time TIME;

-- A user's slot: the (zone, time) pair as one key, the same text in every statement that groups
-- or filters by it ('' for NULL; time's text form does not depend on DateStyle). The distinct
-- slots are read from this index by a skip scan — one probe per slot, whatever the number of
-- users — each time the daemon looks for the next instant.
CREATE INDEX IF NOT EXISTS users_slot_idx
    ON users ((coalesce(time_zone, '') || '|' || coalesce(notify_time::text, '')));

-- The slots a run served (NULL: every user, as `--date` and every run before this migration).
ALTER TABLE sileme.notifier_runs ADD COLUMN IF NOT EXISTS slots TEXT[];
