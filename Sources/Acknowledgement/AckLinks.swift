import Config
import Foundation
import Values

/// Makes the per-contact acknowledgement link of a message (docs/acknowledgement.md): `ACK_BASE_URL`, `/`, a
/// token naming the user, the streak and the contact. One per configuration; nil links without
/// `ACK_BASE_URL` (nothing changes in the mails then).
package struct AckLinks: Sendable {
    private let settings: AckSettings
    private let key: AckKey

    /// The links of the page's settings; nil when they make none (no `ACK_*` settings, or no
    /// `ACK_BASE_URL`).
    package init?(_ ack: AckSettings?) {
        guard let ack, ack.baseURL != nil else { return nil }
        settings = ack
        key = AckKey(secret: ack.secret)
    }

    /// The link for `contact` about the streak whose alert is dated `alertDate`, in a message made
    /// on `runDate` counting `missedDays` (which dates the streak's start, and so the expiry).
    package func link(userID: String, alertDate: CalendarDate, contact: String, runDate: CalendarDate, missedDays: Int) -> String? {
        guard UUID(uuidString: userID) != nil else { return nil }
        let token = AckToken(userID: userID, alertDate: alertDate,
                             expiresOn: AckToken.expiry(runDate: runDate, missedDays: missedDays, validDays: settings.validDays),
                             contactTag: key.tag(contact: contact))
        return settings.link(token: key.sign(token))
    }
}
