import Foundation
import Rule
import Values

/// The SQL of the page's outcome buttons (docs/acknowledgement.md, docs/escalation.md): a contact
/// who said "I'm on it" says how it ended — "They're OK" or "I couldn't reach them" — once per
/// streak, kept on the streak's escalation record. Stateless.
package enum OutcomeStore {
    /// An outcome as recorded: what was said, by whom, when.
    package struct Recorded: Sendable, Equatable {
        /// "They're OK" or "I couldn't reach them".
        package var kind: EscalationRule.Outcome
        /// Who said it: the address as the delivery key holds it (trimmed, lower-cased), never shown whole.
        package var contact: String
        /// When.
        package var at: Date

        /// Creates the value.
        package init(kind: EscalationRule.Outcome, contact: String, at: Date) {
            self.kind = kind
            self.contact = contact
            self.at = at
        }

        /// The outcome of a row with `outcome`, `outcome_contact` and `outcome_epoch`; nil when none is recorded.
        init?(_ row: PGRow) {
            guard let kind = row.string("outcome").flatMap(EscalationRule.Outcome.init(rawValue:)),
                  let contact = row.string("outcome_contact"),
                  let epoch = row.string("outcome_epoch").flatMap(Double.init) else { return nil }
            self.init(kind: kind, contact: contact, at: Date(timeIntervalSince1970: epoch))
        }
    }

    /// Records that `contact` said `outcome` about the streak of `userID` whose alert is dated
    /// `alertDate` — only when nothing was said yet (the first wins), the contact's alert of the
    /// streak was accepted, the contact said "I'm on it" (only someone who went can say how it
    /// ended), and the user has not checked in since. In the same statement the streak moves:
    /// "They're OK" closes it (no escalation, no follow-up); "I couldn't reach them" makes its next
    /// step due at once (`clock_at = -infinity`; a streak already settled as heard by the
    /// acknowledgement waits again, at the step it had reached). A new one wakes the daemons that
    /// listen (`NOTIFY sileme_check_in` with the user id): their pass makes the step and sends the
    /// notices. Returns whether this call recorded it.
    @discardableResult
    package static func record(_ db: PGConnection, userID: String, alertDate: CalendarDate, contact: String,
                               outcome: EscalationRule.Outcome) throws -> Bool {
        try db.execute(SQLStatement("""
            WITH moved AS (
                UPDATE sileme.escalations e
                SET outcome = $outcome::text, outcome_contact = $contact::text, outcome_at = now(),
                    stage = CASE WHEN $outcome::text = 'ok' THEN 'closed'
                                 WHEN e.stage = 'heard' AND e.escalated_at IS NULL THEN 'alerted'
                                 WHEN e.stage = 'heard' THEN 'escalated'
                                 ELSE e.stage END,
                    heard_at = CASE WHEN $outcome::text = 'ok' THEN now() WHEN e.stage = 'heard' THEN NULL ELSE e.heard_at END,
                    clock_at = CASE WHEN $outcome::text = 'unreachable' AND e.stage IN ('alerted', 'escalated', 'heard')
                                    THEN '-infinity'::timestamptz ELSE e.clock_at END
                WHERE e.user_id = $user_id::uuid AND e.alert_date = $alert_date::date AND e.outcome IS NULL
                  AND EXISTS (SELECT 1 FROM notification_logs a
                              WHERE a.user_id = e.user_id AND a.notification_date = e.alert_date AND a.kind = 'alert'
                                AND a.channel = ANY($contact_channels::text[]) AND a.email_sent AND a.contact = $contact::text)
                  AND EXISTS (SELECT 1 FROM sileme.acknowledgements k
                              WHERE k.user_id = e.user_id AND k.alert_date = e.alert_date AND k.contact = $contact::text)
                  AND NOT EXISTS (SELECT 1 FROM check_ins c
                                  WHERE c.user_id = e.user_id AND c.check_in_date > e.last_check_in_date)
                RETURNING e.user_id
            )
            SELECT pg_notify('sileme_check_in', user_id::text) FROM moved
            """), ["user_id": userID, "alert_date": alertDate.description, "contact": contact,
                   "outcome": outcome.rawValue]).rows.count == 1
    }
}
