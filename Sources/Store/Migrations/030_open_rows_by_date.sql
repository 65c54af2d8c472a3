-- 030: the rows that still need work (002's `notification_logs_open_idx`), indexed by their date
-- alone. The daemon asks every minute when the next failed message is due again
-- (`DaemonState`): the rows of its dates that are `retry` or `sending` and not sent. On 002's
-- (notification_date, status) both conditions are the index's, two arrays, two descents a date;
-- while the statistics did not know the day's rows yet (a young table, autovacuum's ANALYZE not
-- yet come after a day of many mails) the planner costed every index at one row and chose the
-- cheaper descent of the whole date index, `notification_logs_date_idx` — reading every row of the
-- day: 221,454 at ten million users, 133 ms a minute of the daemon's sessions. On the date alone, with the same
-- condition, the partial index costs at most what the date index does for any date, whatever the
-- statistics say, and holds only the unfinished rows. Made beside the old one (the table is read
-- meanwhile, and written once it is done), then put in its place under its name.
CREATE INDEX IF NOT EXISTS notification_logs_open_date_idx ON notification_logs (notification_date)
    WHERE status IN ('sending', 'retry', 'failed');
DROP INDEX IF EXISTS notification_logs_open_idx;
ALTER INDEX notification_logs_open_date_idx RENAME TO notification_logs_open_idx;
