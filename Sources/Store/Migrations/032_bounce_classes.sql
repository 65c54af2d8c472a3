-- 032: what a permanent bounce says about the address (docs/bounces.md). Only an address that does
-- not exist (`5.1.x`, or a plain 550/551/553 naming the recipient unknown) makes a contact
-- undeliverable; a full mailbox, a spam or policy block, a routing failure mark the mail `bounced`
-- (it did not arrive) and leave the contact in use. The class is decided once, by the notifier's
-- rule (`BounceClass`), when the report is applied, and kept beside the row and the report:
--
-- - `notification_logs.bounce_class`: what the streak's notices read — only a bounce of class
--   `no_such_address` stops them, and owes the app `contact.undeliverable`. NULL on a row bounced
--   before this migration: every such bounce was applied as a dead address (its contact marked
--   undeliverable, its notices skipped), and is still read as one.
-- - `bounce_events.bounce_class`: what the history report counts per recipient domain. NULL for
--   the other kinds, and for the permanent reports read before this migration.
--
-- New nullable columns without a default: no rewrite of either table.
ALTER TABLE notification_logs ADD COLUMN IF NOT EXISTS bounce_class TEXT;
ALTER TABLE sileme.bounce_events ADD COLUMN IF NOT EXISTS bounce_class TEXT;
