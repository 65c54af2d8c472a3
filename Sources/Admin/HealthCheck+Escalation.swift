import Foundation
import Store
import Values

extension HealthCheck.Part {
    /// `escalation`: `ESCALATE_AFTER` and the streaks unheard now, from the figures read over the
    /// database's session (exit 1 when they cannot be read).
    static let escalation = Self(read: { db, context in
        context.escalationFigures = Result { try EscalationFigures.read(db) }
        return []
    }, lines: { context in
        [HealthCheck.escalation(after: context.configuration.escalateAfter, figures: context.escalationFigures, now: Date())]
    })
}

extension HealthCheck {
    /// `ESCALATE_AFTER` as an operator writes it: the largest whole unit (`3h`, `90m`, `45s`, `2d`).
    static func written(_ after: Duration) -> String {
        let seconds = after.components.seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    /// The escalation line (docs/escalation.md) — pure: `ESCALATE_AFTER`, the escalated streaks
    /// waiting for an answer, and a warning naming how many streaks are unheard now and the oldest
    /// (somebody should call the family), from the figures read (nil: not read, the database being
    /// unusable or not migrated). Unheard streaks warn even with escalation off now: they were
    /// declared while it was on, and nobody has heard them since.
    static func escalation(after: Duration?, figures: Result<EscalationFigures, any Error>?, now: Date) -> Finding {
        let setting = after.map { "ESCALATE_AFTER \(written($0))" } ?? "off (ESCALATE_AFTER=0)"
        switch figures {
        case nil:
            return Finding(subject: "escalation", ok: true, detail: "\(setting); the streaks cannot be read (see the database line)")
        case .failure(let error):
            return Finding(subject: "escalation", ok: false, detail: "\(setting); the streaks cannot be read: \(error)")
        case .success(let figures):
            let open = "\(figures.open) escalated streak\(figures.open == 1 ? "" : "s") waiting for an answer"
            guard figures.unheard > 0 else {
                return Finding(subject: "escalation", ok: true, detail: "\(setting); \(open); none unheard")
            }
            var detail = "\(setting); \(figures.unheard) streak\(figures.unheard == 1 ? "" : "s") unheard: "
                + "nobody answered the alert or its escalation"
            if let oldest = figures.oldestUnheard {
                let hours = max(0, Int(now.timeIntervalSince(oldest.since) / 3600))
                detail += "; the oldest: user \(oldest.userID)'s alert of \(oldest.alertDate), unheard since "
                    + "\(CalendarDate.rfc3339(oldest.since)) (\(hours) h ago)"
            }
            return Finding(subject: "escalation", ok: true, warning: true, detail: detail + "; \(open)")
        }
    }
}
