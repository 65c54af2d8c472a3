import Config
import Foundation
import Store
import Values

extension HealthCheck.Part {
    /// `check-in triggers`: the notifier's triggers on the `check_ins` the app writes (78 if not:
    /// a `check_ins` replaced since `migrate`, partitioned by the app, has none, and its check-ins
    /// would go unseen).
    static let checkInTriggers = Self(read: { db, _ in
        let found = try CheckInTriggers.find(db)
        let problem = CheckInTriggers.problem(found)
        return [Finding(subject: "check-in triggers", ok: problem == nil,
                        detail: problem ?? "\(CheckInTriggers.names.count) on \(found.table ?? "check_ins")"
                            + (found.partitioned ? " (partitioned: on every partition)" : ""),
                        failure: .configuration)]
    })

    /// `exposed` (a warning each) for every role besides the notifier's that reaches its schema,
    /// or an app table without row-level security; else one `exposure` line.
    static let exposure = Self(read: { db, context in
        try HealthCheck.reading("exposure", failure: .configuration) {
            let open = try Exposure.findings(db)
            guard open.isEmpty else { return open.map { Finding(subject: "exposed", ok: true, warning: true, detail: $0.description) } }
            return [Finding(subject: "exposure", ok: true,
                            detail: "nothing in schema \(context.configuration.databaseSchema) is open to another role, "
                                + "and \((OwnSchema.appTables + OwnSchema.sharedTables).joined(separator: ", ")) "
                                + "are open to none without row-level security")]
        }
    })

    /// The acknowledgements of the last 30 days, counted for the page's line (`ackPage`); a line
    /// of its own only when they cannot be counted.
    static let acknowledgements = Self(when: { $0.ack != nil }, read: { db, context in
        try HealthCheck.reading("acknowledgements", failure: .failure) {
            let recent = try AcknowledgementStore().count(db, since: Date().addingTimeInterval(-30 * 86400))
            context.acknowledgements = "\(recent) acknowledgement\(recent == 1 ? "" : "s") in the last 30 days"
            return []
        }
    })

    /// `check-in queue`: the check-ins waiting to be folded, a warning when none has been for a
    /// while (no daemon running).
    static let checkInQueue = Self(read: { db, _ in
        try HealthCheck.reading("check-in queue", failure: .configuration) {
            let backlog = try CheckInQueue.backlog(db)
            return [Finding(subject: "check-in queue", ok: true, warning: backlog.isStale, detail: backlog.description)]
        }
    })

    /// `held alerts`: the intake guard's held alerts, or its settings.
    static let heldAlerts = Self(read: { db, context in
        try HealthCheck.reading("held alerts", failure: .configuration) {
            [HealthCheck.holds(try HoldStore.open(db), configuration: context.configuration)]
        }
    })
}

extension HealthCheck {
    /// The intake guard's line: the alerts held now (a warning: the operator decides whether the
    /// app was down), or that none is, with the guard's settings.
    static func holds(_ open: HoldStore.Open, configuration: NotifierConfiguration) -> Finding {
        let guardSettings = configuration.intakeGuard
        guard open.count > 0 else {
            let state = guardSettings.isOn
                ? "none held (a day below \(guardSettings.dropRatio) of its usual intake, where that is at least \(guardSettings.minUsers) users, holds alerts \(guardSettings.holdHours) h)"
                : "none held; the intake guard is off (INTAKE_DROP_RATIO=0)"
            return Finding(subject: "held alerts", ok: true, detail: state)
        }
        let gaps = open.gapDays.map(\.description).joined(separator: ", ")
        let release = open.nextRelease.map { CalendarDate.rfc3339($0) } ?? "?"
        return Finding(subject: "held alerts", ok: true, warning: true,
                       detail: "\(open.count) user(s)' alerts held over the intake gap(s) \(gaps); they go out at \(release), or now with `sileme-notifier release`")
    }
}
