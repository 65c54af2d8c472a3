-- 035: an escalation's recipients as the rule decided them (docs/escalation.md). When a streak
-- escalates, `EscalationRule` says who is told: the first wave's contacts that get the threaded
-- `escalation` notice, and the second tier's contacts that get their first alert. The step
-- records those two lists with the move to `escalated`, and the messages the streak owes are
-- read from them — the rule decides once, and its list is what is sent.
--
-- NULL on a streak escalated before this migration: its recipients are derived from the
-- contacts' tiers as they were (the same rule, in SQL). New nullable columns without a default:
-- no rewrite of the table.
ALTER TABLE sileme.escalations ADD COLUMN IF NOT EXISTS notice_contacts TEXT[];
ALTER TABLE sileme.escalations ADD COLUMN IF NOT EXISTS first_alert_contacts TEXT[];
