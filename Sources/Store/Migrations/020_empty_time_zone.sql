-- 020: the users whose time_zone is the empty text, counted with one index probe.
--
-- A user's slot key (014) reads a NULL time_zone and an empty one alike: both are served in
-- NOTIFY_TIME_ZONE. An empty name is still a fault of the app's (a zone it failed to read), which
-- the runs' journal and the dry run report as they report a name the zone database does not know.
-- Counting such users without a scan of `users` needs this index; it holds only them (normally
-- none), so it costs the app's writes nothing measurable.
CREATE INDEX IF NOT EXISTS users_empty_time_zone_idx ON users (id) WHERE time_zone = '';
