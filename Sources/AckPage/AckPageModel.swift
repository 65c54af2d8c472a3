import Acknowledgement
import Foundation
import Store
import Values

/// From a verified token and the stored streak to what the page shows — pure, so the decision
/// "is this link good, and who is reading" is tested apart from the server that acts on it.
public enum AckPageModel {
    /// The page's model and the reader's recipient row for `token` (verified by the caller),
    /// or nil — the neutral page — when no accepted alert of the streak went to the contact the
    /// token names (an unknown streak, or a contact of another streak or user).
    public static func make(_ streak: AcknowledgementStore.Streak?, token: AckToken, tokenText: String, key: AckKey,
                            today: CalendarDate, zone: TimeZone) -> (model: AckPageView.Model, reader: AcknowledgementStore.Recipient)? {
        guard let streak, let reader = streak.recipients.first(where: { key.tag(token.contactTag, matches: $0.contact) }) else {
            return nil
        }
        let name = (try? DisplayName(cleaning: streak.rawName ?? "").value) ?? "—"
        func minute(_ date: Date) -> String { Self.minuteFormat(date, in: zone) }
        let missed = streak.missedDaysAtAlert + max(0, today.days(since: token.alertDate))
        let model = AckPageView.Model(
            userName: name, missedDays: missed, lastCheckIn: streak.lastCheckIn, alertDate: token.alertDate,
            checkedInSince: streak.checkedInSince,
            recipients: streak.recipients.map { ($0.masked, $0.contact == reader.contact, $0.acknowledgedAt.map(minute)) },
            readerAcknowledgedAt: reader.acknowledgedAt.map(minute), formField: key.formField(token: tokenText))
        return (model, reader)
    }

    /// `YYYY-MM-DD HH:mm` of `date` in `zone`.
    static func minuteFormat(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}
