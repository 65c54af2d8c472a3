import Values
import Rule

/// One user in a dry-run report, as the rule judged them.
package struct ReportRow: Sendable, Equatable {
    /// `users.id`.
    package let userID: String
    /// The name as the mail would show it, or the raw name made printable when it is invalid.
    package let name: String
    /// The contact address as stored (validated and normalised when valid).
    package let email: String
    /// `L`.
    package let lastCheckIn: CalendarDate
    /// `m`.
    package let missedDays: Int
    /// The decision.
    package let decision: Decision
    /// Why the user is skipped, when they are (for `superseded`: the newer account; for `paused`: until when).
    package let reason: String?
    /// The ignored check-in dated after `D + 1` (a wrong device clock), when the user has one.
    package let ignoredFutureCheckIn: CalendarDate?
    /// `users.paused_until`, when set.
    package let pausedUntil: CalendarDate?
    /// The newer account's id (for `superseded`).
    package let newerAccount: String?
    /// The newer account's latest check-in (for `superseded`).
    package let newerCheckIn: CalendarDate?

    /// The user's run date `D_u` (docs/user-time.md): the report's, or their own at the instant.
    package let runDate: CalendarDate?
    /// The zone the user's days are counted in (their own, or `NOTIFY_TIME_ZONE`).
    package let timeZone: String?
    /// The user's `time_zone` when the zone database does not know it (they are served in
    /// `NOTIFY_TIME_ZONE`).
    package let unknownTimeZone: String?
    /// The user's `time_zone` when it is a fixed offset (`UTC+8`, `GMT+05:30`), served at that
    /// offset all year.
    package let fixedOffsetTimeZone: String?
    /// The user's `notify_time` when it is not a time of day (`24:00:00`), and the time they are
    /// served at instead (`NOTIFY_TIME`).
    package let unknownNotifyTime: OddTime?

    /// A `notify_time` that is not a time of day, and the time served instead.
    package struct OddTime: Sendable, Equatable {
        /// As the database wrote it.
        package let written: String
        /// `NOTIFY_TIME`.
        package let served: String
    }

    /// Builds the row for a candidate and its evaluation on `runDate`, counted in `timeZone`, of
    /// the slot `slot` (what it says of an odd zone or time goes into the row).
    /// `language` chooses each contact's language from what the rows store (the contact's, the
    /// user's); without it the row names none.
    package init(candidate: Candidate, evaluation: Evaluation, runDate: CalendarDate? = nil, timeZone: String? = nil,
                slot: NotifySlots.Slot? = nil, language: ((_ contact: String?, _ user: String?) -> LanguageTag.Choice)? = nil) {
        self.runDate = runDate
        self.timeZone = timeZone
        unknownTimeZone = slot?.unknownZone == true ? slot?.zoneName : nil
        fixedOffsetTimeZone = slot?.fixedOffsetZone == true ? slot?.zoneName : nil
        unknownNotifyTime = slot.flatMap { slot in slot.unknownTime.map { OddTime(written: $0, served: slot.schedule.time.description) } }
        userID = candidate.userID
        name = evaluation.name?.value ?? Printable.text(candidate.rawName ?? "")
        email = evaluation.email?.address ?? (candidate.rawEmail ?? "")
        lastCheckIn = candidate.lastCheckIn
        missedDays = evaluation.missedDays
        decision = evaluation.decision
        reason = evaluation.reason
        ignoredFutureCheckIn = candidate.ignoredFutureCheckIn
        pausedUntil = candidate.pausedUntil
        newerAccount = evaluation.supersededBy?.userID
        newerCheckIn = evaluation.supersededBy?.lastCheckIn
        func contact(_ contact: Evaluation.Contact) -> Contact {
            Contact(address: contact.address.address, position: contact.position, tier: contact.tier,
                    language: language?(contact.language, candidate.language))
        }
        contacts = evaluation.contacts.map(contact)
        waiting = evaluation.waiting.map(contact)
    }

    /// A valid contact in force.
    package struct Contact: Sendable, Equatable {
        /// The address.
        package let address: String
        /// Its position.
        package let position: Int
        /// Its tier (1, or 2: alerted when the alert escalates).
        package let tier: Int
        /// The language its mails are written in, and why it is not the one the rows ask for, if
        /// so (docs/languages.md); nil where the report did not choose.
        package var language: LanguageTag.Choice? = nil
    }

    /// The valid contacts the alert goes to now: one alert each when the decision is `send`.
    package let contacts: [Contact]
    /// The valid second-tier contacts held back for the escalation.
    package let waiting: [Contact]

    /// What a reader should know besides the decision: the ignored future-dated check-in, and the
    /// end of a pause the missed days are counted from (the `superseded`/`paused` reason is the
    /// decision's own). Nil when there is nothing to say.
    package var note: String? {
        var notes: [String] = []
        if let unknownTimeZone { notes.append("unknown time zone \"\(Printable.text(unknownTimeZone))\": served in \(timeZone ?? "the service zone")") }
        if let fixedOffsetTimeZone {
            notes.append("fixed-offset time zone \"\(Printable.text(fixedOffsetTimeZone))\": served at that offset all year (no daylight saving)")
        }
        if let unknownNotifyTime {
            notes.append("notify time \(Printable.text(unknownNotifyTime.written)) is not a time of day: served at \(unknownNotifyTime.served)")
        }
        if let ignoredFutureCheckIn { notes.append("ignored future-dated check-in \(ignoredFutureCheckIn)") }
        if decision != .paused, let pausedUntil, pausedUntil > lastCheckIn { notes.append("counted from the end of a pause on \(pausedUntil)") }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// The reason and the note in one text (the CSV's `reason` column, the table's note line).
    package var explanation: String? {
        let parts = [reason, note].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The address as reports show it: masked (`a***@example.com`) unless `full`.
    package func displayEmail(full: Bool) -> String {
        full ? Printable.text(email) : EmailMasking.mask(email)
    }
}
