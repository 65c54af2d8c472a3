/// Why a user's name cannot be used in a mail (see `DisplayName`).
package enum NameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing is left after removing control and format characters and trimming whitespace.
    case empty

    /// A short human explanation that is safe to log.
    package var reason: String {
        switch self {
        case .empty: "empty after removing control characters and whitespace"
        }
    }

    /// The same as `reason`.
    package var description: String { reason }
}
