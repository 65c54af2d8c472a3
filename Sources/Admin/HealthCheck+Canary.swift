import Config
import Delivery
import Foundation
import Store
import Values

extension HealthCheck.Part {
    /// `canary`, a line per relay (docs/operating.md, "The canary"), from the canaries' figures
    /// read over the database's session — where the relays are checked.
    static let canary = Self(when: { $0.canary != nil && !HealthCheck.writesToOutbox($0) }, read: { db, context in
        context.canaryFigures = Result { try CanaryStore.figures(db) }
        return []
    }, lines: { context in
        guard let canary = context.configuration.canary else { return [] }
        return HealthCheck.canaries(canary, relays: context.configuration.mail.relays.map(\.url), figures: context.canaryFigures, now: Date())
    })
}

extension HealthCheck {
    /// The canary's lines (docs/operating.md, "The canary"), a line per relay — pure. A relay whose
    /// latest canary is lost, or none of whose canaries came back within `CANARY_EVERY` +
    /// `CANARY_WITHIN`, fails the check (exit 69): mail through it may not be arriving. None sent
    /// yet is a warning (no daemon has run a period since the canary was set).
    static func canaries(_ settings: CanarySettings, relays: [String], figures: Result<[CanaryStore.Figures], any Error>?, now: Date) -> [Finding] {
        let byRelay: [String: CanaryStore.Figures]
        switch figures {
        case .success(let list): byRelay = Dictionary(list.map { ($0.relay, $0) }) { $1 }
        case .failure(let error): return [Finding(subject: "canary", ok: false, detail: "cannot be read: \(error)", failure: .unavailable)]
        case nil: return [Finding(subject: "canary", ok: false, detail: "cannot be read (the database cannot be used)", failure: .unavailable)]
        }
        return relays.map { relay in
            let figures = byRelay[relay]
            let counts = figures.map { ": \($0.sent) sent, \($0.back) back, \($0.lost) lost" } ?? ""
            switch CanaryPlan.health(figures, now: now, settings: settings) {
            case .back(let latency, let at):
                let took = latency.map { String(format: "%.1f s", $0) } ?? "?"
                return Finding(subject: "canary", ok: true, detail: "\(relay)\(counts); the last back \(CalendarDate.rfc3339(at)) after \(took)")
            case .noneYet:
                return Finding(subject: "canary", ok: true, warning: true,
                               detail: "\(relay)\(counts); none back yet (is the daemon running? one is sent every CANARY_EVERY)")
            case .lost(let reason):
                return Finding(subject: "canary", ok: false, detail: "\(relay)\(counts); the latest is lost (\(reason)): mail through this relay "
                               + "may not be arriving (docs/operating.md, \"The canary\")", failure: .unavailable)
            case .overdue(let since):
                return Finding(subject: "canary", ok: false, detail: "\(relay)\(counts); none back since \(CalendarDate.rfc3339(since)), "
                               + "more than CANARY_EVERY + CANARY_WITHIN: is the daemon sending them, does the mailbox receive them?",
                               failure: .unavailable)
            }
        }
    }
}
