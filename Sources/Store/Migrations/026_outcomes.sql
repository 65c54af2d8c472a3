-- 026: the acknowledgement page's outcomes (docs/escalation.md). A contact who said "I'm on it"
-- can then say how it ended — "They're OK" or "I couldn't reach them" — once per streak, in the
-- `outcome` columns of `sileme.escalations` (024). Every other contact of the streak is told, and
-- the app hears `checkin.outcome`.
--
-- The daemon's all-clear pass, every `ALL_CLEAR_POLL_SECONDS`, reads the streaks with an outcome
-- whose notices may still be owed (alerts of the last 40 days): a partial index of those alone,
-- so the pass reads the few streaks with an outcome, never every alerted streak.
CREATE INDEX IF NOT EXISTS escalations_outcome_idx ON sileme.escalations (alert_date) WHERE outcome IS NOT NULL;
