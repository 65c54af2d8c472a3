import Config
import Foundation
import Store

/// The canary's decisions (docs/operating.md, "The canary") — pure, each a unit test: when a relay
/// is due a canary, when an open one is lost, and what `check` says of a relay's canaries. The
/// code that sends, marks and reports (`CanarySender`, `BounceReader`, `HealthCheck`) acts on them.
package enum CanaryPlan {
    /// The start of the period `now` falls in: periods of `every` counted from the epoch, so
    /// every daemon names the same period and one claim (`CanaryStore.claim`) settles who sends.
    package static func period(of now: Date, every: Duration) -> Date {
        let length = Double(every.components.seconds)
        guard length > 0 else { return now }
        return Date(timeIntervalSince1970: (now.timeIntervalSince1970 / length).rounded(.down) * length)
    }

    /// The period a relay is due a canary for now, or nil when this daemon claimed (or tried to
    /// claim) the current one already (`lastClaimed`).
    package static func due(lastClaimed: Date?, now: Date, every: Duration) -> Date? {
        let current = period(of: now, every: every)
        guard let lastClaimed else { return current }
        return lastClaimed < current ? current : nil
    }

    /// Whether a canary sent at `sentAt`, still not back, is lost at `now`.
    package static func isLost(sentAt: Date, now: Date, within: Duration) -> Bool {
        now.timeIntervalSince(sentAt) >= Double(within.components.seconds)
    }

    /// The open canaries that are lost at `now`.
    package static func lost(_ open: [CanaryStore.Open], now: Date, within: Duration) -> [CanaryStore.Open] {
        open.filter { isLost(sentAt: $0.sentAt, now: now, within: within) }
    }

    /// What `check` says of one relay's canaries.
    package enum Health: Sendable, Equatable {
        /// The last came back (`latency` seconds) in time.
        case back(latency: Double?, at: Date)
        /// None sent yet (the daemon has not run a period since the canary was set).
        case noneYet
        /// The latest canary is lost (`reason`).
        case lost(reason: String)
        /// None came back within `CANARY_EVERY` + `CANARY_WITHIN` (of the last one back, or of the
        /// first sent when none ever came back).
        case overdue(since: Date)

        /// Whether `check` fails.
        package var fails: Bool {
            switch self {
            case .back, .noneYet: false
            case .lost, .overdue: true
            }
        }
    }

    /// `figures`' health at `now` under `settings` (nil figures: no canary through the relay yet).
    package static func health(_ figures: CanaryStore.Figures?, now: Date, settings: CanarySettings) -> Health {
        guard let figures, let first = figures.firstSentAt else { return .noneYet }
        if let reason = figures.latestLost { return .lost(reason: reason) }
        let since = figures.lastBackAt ?? first
        let allowed = Double(settings.every.components.seconds + settings.within.components.seconds)
        if now.timeIntervalSince(since) > allowed { return .overdue(since: since) }
        guard let back = figures.lastBackAt else { return .noneYet }
        return .back(latency: figures.lastLatency, at: back)
    }
}
