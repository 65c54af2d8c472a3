import Foundation

/// When an alert nobody hears escalates (docs/escalation.md), as a pure function of one alerted
/// streak's stored facts and the clock: the daemon reads the facts, asks `step(_:now:)`, and only
/// carries out what it says.
///
/// An alert is **heard** when the user checked in, or a contact pressed "I'm on it" — unless that
/// contact then said "I couldn't reach them". One not heard `after` past its first acceptance
/// escalates; one still not heard `after` past the escalation is **unheard**, and nothing more is
/// sent. The step comes at once, whatever the clock, when nobody can have read the alert (every
/// alert of the first wave bounced) or when a contact who went said they could not reach the user — that
/// hurries only the next step, not the one after it. "They're OK" closes the streak.
package struct EscalationRule: Sendable, Equatable {
    /// `ESCALATE_AFTER`: the wait before each step.
    package let after: Duration

    /// Creates the rule.
    package init(after: Duration) { self.after = after }

    /// One contact of the user, as the step needs it.
    package struct Contact: Sendable, Equatable {
        /// The address as the delivery key holds it (trimmed, lower-cased).
        package var key: String
        /// `emergency_contacts.tier`: 1 is alerted at once, 2 only when the alert escalates
        /// (`users.emergency_email` is tier 1).
        package var tier: Int
        /// Whether the contact's alert of this streak was accepted by the mail server.
        package var alerted: Bool
        /// Whether mail to the contact is known not to arrive: its alert of the streak bounced
        /// (whatever the class: a full mailbox or a spam block too), or (not alerted) the address
        /// is marked undeliverable.
        package var bounced: Bool
        /// Whether its alert bounced for another reason than a dead address — a full mailbox, a
        /// spam block (docs/bounces.md): the address stays in use, and the escalation's notice
        /// still goes to it.
        package var stillInUse: Bool

        /// Creates the value.
        package init(key: String, tier: Int, alerted: Bool, bounced: Bool, stillInUse: Bool = false) {
            self.key = key
            self.tier = tier
            self.alerted = alerted
            self.bounced = bounced
            self.stillInUse = stillInUse
        }
    }

    /// What a contact who went said on the page, once per streak.
    package enum Outcome: String, Sendable, Equatable {
        /// "They're OK": the streak is closed.
        case ok
        /// "I couldn't reach them": the next step comes at once.
        case unreachable
    }

    /// What is stored about one alerted streak.
    package struct Facts: Sendable, Equatable {
        /// When the streak's first alert was accepted.
        package var firstSentAt: Date
        /// Whether the user checked in after the alert's `L`.
        package var checkedIn: Bool
        /// Whether a contact pressed "I'm on it".
        package var acknowledged: Bool
        /// The user's contacts in serving order, each with its tier and state.
        package var contacts: [Contact]
        /// When the streak escalated, if it did.
        package var escalatedAt: Date?
        /// When the streak was declared unheard, if it was.
        package var unheardAt: Date?
        /// The outcome a contact recorded, who recorded it and when.
        package var outcome: (kind: Outcome, contact: String, at: Date)?

        /// Creates the value.
        package init(firstSentAt: Date, checkedIn: Bool = false, acknowledged: Bool = false, contacts: [Contact],
                     escalatedAt: Date? = nil, unheardAt: Date? = nil, outcome: (kind: Outcome, contact: String, at: Date)? = nil) {
            self.firstSentAt = firstSentAt
            self.checkedIn = checkedIn
            self.acknowledged = acknowledged
            self.contacts = contacts
            self.escalatedAt = escalatedAt
            self.unheardAt = unheardAt
            self.outcome = outcome
        }

        package static func == (lhs: Facts, rhs: Facts) -> Bool {
            lhs.firstSentAt == rhs.firstSentAt && lhs.checkedIn == rhs.checkedIn && lhs.acknowledged == rhs.acknowledged
                && lhs.contacts == rhs.contacts && lhs.escalatedAt == rhs.escalatedAt && lhs.unheardAt == rhs.unheardAt
                && lhs.outcome?.kind == rhs.outcome?.kind && lhs.outcome?.contact == rhs.outcome?.contact
                && lhs.outcome?.at == rhs.outcome?.at
        }
    }

    /// Why a step comes now.
    package enum Cause: String, Sendable, Equatable {
        /// `ESCALATE_AFTER` has passed since the step before.
        case waitedOut = "waited_out"
        /// Every first-tier contact's alert bounced: nobody can have read it.
        case allBounced = "all_bounced"
        /// A contact who went said they could not reach the user.
        case unreachable
    }

    /// Why a streak needs nothing more.
    package enum Settled: String, Sendable, Equatable {
        /// The user checked in (the all-clears say so).
        case checkedIn = "checked_in"
        /// A contact is going ("I'm on it").
        case acknowledged
        /// A contact who went said "They're OK".
        case reportedOK = "reported_ok"
        /// It was declared unheard: nothing more is sent.
        case unheard
    }

    /// What the escalation sends.
    package struct Escalation: Sendable, Equatable {
        /// Why now.
        package var cause: Cause
        /// The contacts of the first alert (`firstWave`) that get the threaded `escalation` notice:
        /// each whose alert did not bounce, or bounced with the address still in use
        /// (`Contact.stillInUse`: a full mailbox, a spam block), but the one who said they could
        /// not reach the user.
        package var notices: [String]
        /// The second-tier contacts that get their first alert: each not alerted yet whose mail is
        /// not known to bounce.
        package var firstAlerts: [String]

        /// Creates the value.
        package init(cause: Cause, notices: [String], firstAlerts: [String]) {
            self.cause = cause
            self.notices = notices
            self.firstAlerts = firstAlerts
        }
    }

    /// What to do about a streak now.
    package enum Step: Sendable, Equatable {
        /// Not heard, and the next step is not due before this instant.
        case wait(until: Date)
        /// Escalate now.
        case escalate(Escalation)
        /// Declare it unheard now (nothing is mailed).
        case unheard(Cause)
        /// Nothing more, ever, for this streak.
        case settled(Settled)
    }

    /// `after` in seconds.
    package var seconds: TimeInterval {
        let parts = after.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }

    /// Whether the streak is heard: the user checked in, or a contact is going — a contact who
    /// then said "I couldn't reach them" takes that back.
    package func settled(_ facts: Facts) -> Settled? {
        if facts.checkedIn { return .checkedIn }
        if facts.outcome?.kind == .ok { return .reportedOK }
        if facts.unheardAt != nil { return .unheard }
        if facts.acknowledged && facts.outcome?.kind != .unreachable { return .acknowledged }
        return nil
    }

    /// The contacts the streak's first alert reached the mail server for: the first tier's — or,
    /// when no first-tier contact was alerted (a user whose contacts are all of the second tier,
    /// or whose first-tier addresses were unusable, is alerted at once), everyone alerted.
    package func firstWave(_ facts: Facts) -> [Contact] { Self.firstWave(facts.contacts) }

    /// `firstWave` of a streak's `contacts`.
    package static func firstWave(_ contacts: [Contact]) -> [Contact] {
        let alerted = contacts.filter(\.alerted)
        let first = alerted.filter { $0.tier == 1 }
        return first.isEmpty ? alerted : first
    }

    /// Whether every contact of the first alert bounced (false when none was alerted).
    package func allBounced(_ facts: Facts) -> Bool {
        let wave = firstWave(facts)
        return !wave.isEmpty && wave.allSatisfy(\.bounced)
    }

    /// The step at `now`: settled when heard, closed or already unheard; else the escalation,
    /// then unheard, each when its wait is over — or at once, for the escalation when every
    /// first-tier alert bounced, for either when "I couldn't reach them" was said after the step
    /// before it.
    package func step(_ facts: Facts, now: Date) -> Step {
        if let settled = settled(facts) { return .settled(settled) }
        let previous = facts.escalatedAt ?? facts.firstSentAt
        let hurried = facts.outcome.map { $0.kind == .unreachable && $0.at > previous } ?? false
        let due = previous.addingTimeInterval(seconds)
        guard facts.escalatedAt == nil else {
            if hurried { return .unheard(.unreachable) }
            return now >= due ? .unheard(.waitedOut) : .wait(until: due)
        }
        let cause: Cause
        if hurried { cause = .unreachable } else if allBounced(facts) { cause = .allBounced } else if now >= due { cause = .waitedOut } else {
            return .wait(until: due)
        }
        let reporter = facts.outcome?.contact
        return .escalate(Escalation(
            cause: cause,
            notices: firstWave(facts).filter { (!$0.bounced || $0.stillInUse) && $0.key != reporter }.map(\.key),
            firstAlerts: facts.contacts.filter { $0.tier == 2 && !$0.alerted && !$0.bounced }.map(\.key)))
    }
}
