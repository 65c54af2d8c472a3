import Foundation
import Values

/// What an acknowledgement link names (docs/acknowledgement.md): the user, the streak (its alert's date, as the
/// alert's `notification_logs` rows name it), the contact, and the day the link stops working —
/// 30 days after the streak's first missed day. Made by `AckKey.sign`, read back only by
/// `AckKey.verify`.
///
/// The contact is named by a keyed tag of its address, not the address: links end up in proxies'
/// access logs and browser histories, and the page finds the contact among the alert's few
/// recipients by the tag.
package struct AckToken: Sendable, Equatable {
    /// `users.id`, lower-case.
    package let userID: String
    /// The streak: the date of the alert the contact got.
    package let alertDate: CalendarDate
    /// The first day the link no longer works.
    package let expiresOn: CalendarDate
    /// `AckKey.tag(contact:)` of the contact's address.
    package let contactTag: [UInt8]

    /// Creates the value (`contactTag` must be `AckKey.tagLength` bytes).
    package init(userID: String, alertDate: CalendarDate, expiresOn: CalendarDate, contactTag: [UInt8]) {
        self.userID = userID.lowercased()
        self.alertDate = alertDate
        self.expiresOn = expiresOn
        self.contactTag = contactTag
    }

    /// The day a link made on `runDate` for a message counting `missedDays` stops working:
    /// `validDays` after the streak's first missed day (`runDate - missedDays`). An alert and its
    /// follow-up give the same day (the follow-up's missed days grow with its run date).
    package static func expiry(runDate: CalendarDate, missedDays: Int, validDays: Int) -> CalendarDate {
        runDate.adding(days: validDays - missedDays)
    }

    /// Version, user (16 bytes), alert date and expiry (4 bytes each, big-endian day numbers), tag.
    static let payloadLength = 1 + 16 + 4 + 4 + AckKey.tagLength
    static let version: UInt8 = 1

    /// The signed part's bytes; nil when the user id is not a UUID.
    var payload: [UInt8]? {
        guard let uuid = UUID(uuidString: userID) else { return nil }
        var bytes: [UInt8] = [Self.version]
        withUnsafeBytes(of: uuid.uuid) { bytes += $0 }
        bytes += Self.bigEndian(alertDate.dayNumber) + Self.bigEndian(expiresOn.dayNumber) + contactTag
        return bytes
    }

    /// The token of `payload` bytes (already authenticated); nil when they do not parse.
    init?(payload bytes: [UInt8]) {
        guard bytes.count == Self.payloadLength, bytes[0] == Self.version else { return nil }
        let uuid = bytes[1..<17].withUnsafeBytes { raw in
            UUID(uuid: raw.loadUnaligned(as: uuid_t.self))
        }
        self.init(userID: uuid.uuidString, alertDate: CalendarDate(dayNumber: Self.integer(bytes[17..<21])),
                  expiresOn: CalendarDate(dayNumber: Self.integer(bytes[21..<25])), contactTag: Array(bytes[25...]))
    }

    private static func bigEndian(_ value: Int) -> [UInt8] {
        let v = UInt32(truncatingIfNeeded: Int32(clamping: value))
        return [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    private static func integer(_ bytes: ArraySlice<UInt8>) -> Int {
        Int(Int32(bitPattern: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
    }
}
