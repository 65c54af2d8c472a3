-- 018: the recently paused users of some notify times, one index range each.
--
-- A run of one notify instant (docs/user-time.md) lists, besides its users' due window, the
-- users of its times whose pause ended within the catch-up window. It found them by intersecting
-- two indexes: every user of its times (users_slot_idx, 014: ~5,000 entries for an instant of 18
-- times at 1M users) with every recently paused user (users_paused_until_idx, 008). That bitmap
-- was half of an instant's due set, paid 192 times a day (bench/history/user-time.md).
-- Keyed by the time and then the pause's end, and kept only for users who ever paused (as 008's),
-- it is one short range per time. A run of everyone still range-scans 008's index.
CREATE INDEX IF NOT EXISTS users_paused_slot_idx
    ON users ((coalesce(time_zone, '') || '|' || coalesce(notify_time::text, '')), paused_until)
    WHERE paused_until IS NOT NULL;
