import Values

/// One user as the batch query returns them: someone whose latest check-in before the run date
/// is at least `threshold` days back and who has not checked in on the run date or the day after
/// (later dates are ignored as bad data), with what the guards of docs/guards.md need.
package struct Candidate: Sendable, Equatable {
    /// `users.id` (a UUID in the app's schema; kept as text).
    package var userID: String
    /// `users.name` as stored (may be NULL in a hand-made database).
    package var rawName: String?
    /// `users.emergency_email` as stored: the contact of a user without `contacts`.
    package var rawEmail: String?
    /// The user's rows of `emergency_contacts` as stored, served in this order (`position`, then
    /// `id`; at most 5). Empty when the user has none, or when the run does not need them (the
    /// batch query reads them only for users the rule could send to).
    package var contacts: [RawContact] = []
    /// `L`: the latest `check_in_date` before the run date.
    package var lastCheckIn: CalendarDate
    /// True when a `notification_logs` row dated after `L'` (`MissRule.effectiveLastCheckIn`) has
    /// `email_sent = true`.
    package var notifiedInStreak: Bool
    /// `users.paused_until`: the last day the user said they are away; nil when not set.
    package var pausedUntil: CalendarDate?
    /// The latest check-in dated after `D + 1` (a wrong device clock), which the rule ignores; nil
    /// when there is none.
    package var ignoredFutureCheckIn: CalendarDate?
    /// The other users with the same contact address (empty when `SUPERSEDE=off` or there are none).
    package var sameContact: [OtherAccount]
    /// The user's slot key (`NotifySlots.Slot.key`: the zone and notify time stored for them);
    /// nil where the reader did not ask.
    package var slot: String?
    /// `users.language` as stored (docs/languages.md): the language of the contacts who name none.
    package var language: String?
    /// The intake guard's recorded holds of this user's streaks (docs/intake-hold.md), by `L'`:
    /// read beside the user by the batch query when the run applies the guard, for users the
    /// rule could send to — so that a run holds one user's, never every hold of a mass hold.
    package var recordedHolds: [CalendarDate: IntakeGuard.Hold] = [:]

    /// One row of `emergency_contacts` as stored.
    package struct RawContact: Sendable, Equatable {
        /// `emergency_contacts.email`.
        package var email: String?
        /// `emergency_contacts.position`.
        package var position: Int
        /// `emergency_contacts.tier`: 1 is alerted at once, 2 only when the alert escalates
        /// (`users.emergency_email` is tier 1).
        package var tier: Int
        /// `emergency_contacts.language` as stored.
        package var language: String?

        /// Creates the value.
        package init(email: String?, position: Int, tier: Int = 1, language: String? = nil) {
            self.email = email
            self.position = position
            self.tier = tier
            self.language = language
        }
    }

    /// The contacts in force: the rows of `emergency_contacts`, or else `users.emergency_email` as
    /// the one contact at position 1.
    package var contactsInForce: [RawContact] {
        contacts.isEmpty ? [RawContact(email: rawEmail, position: 1)] : contacts
    }

    /// Creates a candidate.
    package init(userID: String, rawName: String?, rawEmail: String?, lastCheckIn: CalendarDate, notifiedInStreak: Bool,
                pausedUntil: CalendarDate? = nil, ignoredFutureCheckIn: CalendarDate? = nil, sameContact: [OtherAccount] = [],
                contacts: [RawContact] = [], slot: String? = nil) {
        self.contacts = contacts
        self.slot = slot
        self.userID = userID
        self.rawName = rawName
        self.rawEmail = rawEmail
        self.lastCheckIn = lastCheckIn
        self.notifiedInStreak = notifiedInStreak
        self.pausedUntil = pausedUntil
        self.ignoredFutureCheckIn = ignoredFutureCheckIn
        self.sameContact = sameContact
    }
}
