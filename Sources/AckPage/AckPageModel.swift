import Acknowledgement
import Foundation
import Store
import Values

/// From a verified token and the stored streak to what the page shows — pure, so the decision
/// "is this link good, and who is reading" is tested apart from the server that acts on it.
package enum AckPageModel {
    /// The page's model and the reader's recipient row for `token` (verified by the caller),
    /// or nil — the neutral page — when no accepted alert of the streak went to the contact the
    /// token names (an unknown streak, or a contact of another streak or user).
    package static func make(_ streak: AcknowledgementStore.Streak?, token: AckToken, tokenText: String, key: AckKey,
                            today: CalendarDate, zone: TimeZone) -> (model: AckPageView.Model, reader: AcknowledgementStore.Recipient)? {
        guard let streak, let reader = streak.recipients.first(where: { key.tag(token.contactTag, matches: $0.contact) }) else {
            return nil
        }
        let name = (try? DisplayName(cleaning: streak.rawName ?? "").value) ?? "—"
        func minute(_ date: Date) -> String { Self.minuteFormat(date, in: zone) }
        let missed = streak.missedDaysAtAlert + max(0, today.days(since: token.alertDate))
        var model = AckPageView.Model(
            userName: name, missedDays: missed, lastCheckIn: streak.lastCheckIn, alertDate: token.alertDate,
            checkedInSince: streak.checkedInSince,
            recipients: zip(streak.recipients, distinct(streak.recipients)).map { recipient, shown in
                (shown, recipient.contact == reader.contact, recipient.acknowledgedAt.map(minute))
            },
            readerAcknowledgedAt: reader.acknowledgedAt.map(minute), formField: key.formField(token: tokenText))
        if let said = streak.outcome {
            let by = streak.recipients.firstIndex { $0.contact == said.contact }.map { distinct(streak.recipients)[$0] }
                ?? EmailMasking.mask(said.contact)
            model.outcome = .init(ok: said.kind == .ok, by: by, at: minute(said.at), byReader: said.contact == reader.contact)
        }
        // Only a contact who went can say how it ended, once per streak, while the streak is open.
        model.canSayOutcome = streak.recordsOutcome && streak.outcome == nil && reader.acknowledgedAt != nil
            && streak.checkedInSince == nil
        return (model, reader)
    }

    /// The recipients as the page shows them: masked, and told apart where masks are equal
    /// (`m***@example.com` four times says nothing of who is on it): those get the last character
    /// of the address's local part too, and where even that is equal, their order (`#2`).
    static func distinct(_ recipients: [AcknowledgementStore.Recipient]) -> [String] {
        func count(_ shown: [String]) -> [String: Int] { shown.reduce(into: [:]) { $0[$1, default: 0] += 1 } }
        let masked = recipients.map(\.masked)
        let once = count(masked)
        let longer = zip(recipients, masked).map { recipient, mask in
            guard once[mask, default: 0] > 1, let at = mask.firstIndex(of: "*"),
                  let local = recipient.contact.split(separator: "@").first, local.count > 1, let last = local.last else { return mask }
            return String(mask[..<at]) + "***" + Printable.text(String(last)) + String(mask[at...].drop { $0 == "*" })
        }
        let twice = count(longer)
        var seen: [String: Int] = [:]
        return longer.map { shown in
            guard twice[shown, default: 0] > 1 else { return shown }
            seen[shown, default: 0] += 1
            return "\(shown) #\(seen[shown]!)"
        }
    }

    /// `YYYY-MM-DD HH:mm` of `date` in `zone`.
    static func minuteFormat(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}
