import Values

/// The rule's verdict on one candidate: missed days, decision, and what was cleaned or rejected.
package struct Evaluation: Sendable {
    /// `m`, consecutive missed days.
    package var missedDays: Int
    /// What to do.
    package var decision: Decision
    /// Why the user is skipped (for `invalid_email` / `invalid_name`); never contains the full address.
    package var reason: String?
    /// The first valid contact address (present for `.send`, and for `.invalidName`).
    package var email: EmailAddress? { contacts.first?.address }
    /// The valid contacts in force the alert goes to now, in serving order (one alert each): the
    /// first tier, or every tier when there is no second step to wait for (`MissRule.firstAlerted`).
    package var contacts: [Contact] = []
    /// The valid second-tier contacts held back: their first alert comes with the escalation.
    package var waiting: [Contact] = []
    /// The contacts in force that are not valid addresses (each skipped with its reason while the
    /// valid ones are served; all of them invalid is the decision `invalid_email`).
    package var invalidContacts: [InvalidContact] = []
    /// The cleaned display name (present for `.send`).
    package var name: DisplayName?
    /// `L' = max(L, paused_until)`: where the missed days are counted from.
    package var effectiveLastCheckIn: CalendarDate?
    /// The newer account (for `.superseded`).
    package var supersededBy: OtherAccount?

    /// A valid contact address and its position.
    package struct Contact: Sendable, Equatable {
        /// The validated address.
        package let address: EmailAddress
        /// `emergency_contacts.position` (1 for `users.emergency_email`).
        package let position: Int
        /// `emergency_contacts.tier` (1 for `users.emergency_email`).
        package let tier: Int
        /// `emergency_contacts.language` as stored (nil for `users.emergency_email`).
        package let language: String?

        /// Creates the value.
        package init(address: EmailAddress, position: Int, tier: Int = 1, language: String? = nil) {
            self.address = address
            self.position = position
            self.tier = tier
            self.language = language
        }
    }

    /// A contact in force that is not a valid address.
    package struct InvalidContact: Sendable, Equatable {
        /// The address as stored (never logged in full).
        package let raw: String
        /// Its position.
        package let position: Int
        /// Why it is not valid.
        package let reason: String
    }

    /// Creates an evaluation.
    package init(missedDays: Int, decision: Decision, reason: String? = nil, contacts: [Contact] = [],
                invalidContacts: [InvalidContact] = [], name: DisplayName? = nil) {
        self.missedDays = missedDays
        self.decision = decision
        self.reason = reason
        self.contacts = contacts
        self.invalidContacts = invalidContacts
        self.name = name
    }

    /// A copy with the second-tier contacts held back set.
    package func holding(_ waiting: [Contact]) -> Evaluation {
        var copy = self
        copy.waiting = waiting
        return copy
    }

    /// A copy with `L'` and the newer account set.
    package func with(effectiveLastCheckIn: CalendarDate?, supersededBy: OtherAccount? = nil) -> Evaluation {
        var copy = self
        copy.effectiveLastCheckIn = effectiveLastCheckIn
        copy.supersededBy = supersededBy
        return copy
    }
}
