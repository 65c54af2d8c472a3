import Foundation
import Values

/// Header-field values for the mails: RFC 2047 encoded words, mailboxes and RFC 5322 dates.
///
/// Every function takes `prefixLength`, the characters already on the first line (`Subject: ` is 9),
/// and folds with CRLF + one space so that each physical line stays within `maxLineLength`. The
/// result never contains CR or LF except in such a fold, whatever the input.
package enum HeaderEncoding {
    /// The longest physical header line produced (RFC 5322 §2.1.1).
    package static let maxLineLength = 78

    /// UTF-8 bytes per encoded word: 45 bytes are 60 base64 characters, a 72-character word, within
    /// RFC 2047's limit of 75 and, after the one-space indent, within a line.
    package static let maxWordBytes = 45
    package static let fold = "\r\n "

    /// An unstructured header value (e.g. a Subject).
    ///
    /// Printable ASCII with single spaces between words, no leading or trailing space and no `=?` is
    /// emitted as it is, folded at spaces (readable, and spam filters penalize needless base64).
    /// Anything else — non-ASCII, control characters, odd spacing, or a word too long to fold — is
    /// sent as `=?UTF-8?B?…?=` words, one per line, each holding whole grapheme clusters (a cluster
    /// longer than 45 UTF-8 bytes is split between scalars, never inside one).
    package static func encodedWords(_ text: String, prefixLength: Int) -> String {
        if text.isEmpty { return "" }
        if isPlainText(text), let folded = foldPlain(words(text), prefixLength: prefixLength) {
            return folded
        }
        return encode(text, prefixLength: prefixLength)
    }

    /// A mailbox for `From:`/`To:`: `address` alone when `name` is nil or empty; `name <address>`
    /// when the name is ASCII atoms separated by single spaces; otherwise `=?UTF-8?B?…?= <address>`
    /// (so names with RFC 5322 specials such as `.` `,` `"` `<` or with non-ASCII are encoded).
    ///
    /// `address` must already be validated (`EmailAddress.address`): it is copied verbatim.
    package static func displayNameMailbox(name: String?, address: String, prefixLength: Int) -> String {
        guard let name, !name.isEmpty else { return address }
        let plain = isAtomPhrase(name) ? foldPlain(words(name), prefixLength: prefixLength) : nil
        let phrase = plain ?? encode(name, prefixLength: prefixLength)
        let angle = "<\(address)>"
        let lastLine: Int
        if let lastFold = phrase.range(of: fold, options: .backwards) {
            lastLine = phrase.utf8.distance(from: lastFold.lowerBound, to: phrase.utf8.endIndex) - 2
        } else {
            lastLine = prefixLength + phrase.utf8.count
        }
        return phrase + (lastLine + 1 + angle.utf8.count <= maxLineLength ? " " : fold) + angle
    }

    /// An RFC 5322 date such as `Tue, 13 Jan 2026 09:00:00 +0800`, in `timeZone`, with English
    /// names whatever the process locale.
    package static func dateHeader(_ date: Date, timeZone: TimeZone) -> String {
        // Plain arithmetic on the local time (no Calendar: this runs once per message).
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let offsetSeconds = timeZone.secondsFromGMT(for: date)
        let local = Int(date.timeIntervalSince1970.rounded(.down)) + offsetSeconds
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let seconds = local - days * 86_400
        let (year, month, day) = CalendarDate(dayNumber: days).components
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (index 4)
        let offset = offsetSeconds / 60
        func pad(_ n: Int, _ width: Int = 2) -> String {
            let digits = String(n)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(weekdays[weekday]), \(pad(day)) \(months[month - 1]) \(pad(year, 4)) "
            + "\(pad(seconds / 3600)):\(pad(seconds % 3600 / 60)):\(pad(seconds % 60)) "
            + "\(offset < 0 ? "-" : "+")\(pad(abs(offset) / 60))\(pad(abs(offset) % 60))"
    }

    // MARK: - Plain text

    private static func words(_ text: String) -> [String] {
        text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
    }

    /// Printable ASCII, single spaces between words, no spaces at the ends, no `=?`.
    private static func isPlainText(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x20...0x7E).contains($0) } && !text.contains("=?")
            && !words(text).contains(where: \.isEmpty)
    }

    /// Atoms (RFC 5322 `atext` only) separated by single spaces, and no `=?`.
    private static func isAtomPhrase(_ text: String) -> Bool {
        !text.contains("=?")
            && words(text).allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(EmailAddress.isAtext) }
    }

    /// Joins ASCII words with a space, or a fold where the line would grow too long; nil when a
    /// word does not fit on a line of its own.
    private static func foldPlain(_ words: [String], prefixLength: Int) -> String? {
        var result = ""
        var lineLength = prefixLength
        for (index, word) in words.enumerated() {
            let length = word.utf8.count
            if index == 0 {
                guard prefixLength + length <= maxLineLength else { return nil }
                result = word
                lineLength += length
            } else if lineLength + 1 + length <= maxLineLength {
                result += " " + word
                lineLength += 1 + length
            } else {
                guard 1 + length <= maxLineLength else { return nil }
                result += fold + word
                lineLength = 1 + length
            }
        }
        return result
    }

    // MARK: - Encoded words

    /// `=?UTF-8?B?…?=` words joined by folds; the first is sized for the rest of the first line
    /// (and left empty, so the value starts with a fold, when not even one cluster fits there).
    private static func encode(_ text: String, prefixLength: Int) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        var budget = min(maxWordBytes, max(0, (maxLineLength - prefixLength - 12) / 4 * 3))
        for unit in units(text) {
            if chunk.count + unit.count > budget {
                words.append(chunk.isEmpty ? "" : encodedWord(chunk))
                chunk = []
                budget = maxWordBytes
            }
            chunk += unit
        }
        if !chunk.isEmpty { words.append(encodedWord(chunk)) }
        return words.joined(separator: fold)
    }

    /// The UTF-8 bytes of each grapheme cluster; of each scalar for a cluster too long for a word.
    private static func units(_ text: String) -> [[UInt8]] {
        text.flatMap { (character: Character) -> [[UInt8]] in
            let bytes = Array(character.utf8)
            return bytes.count <= maxWordBytes ? [bytes] : character.unicodeScalars.map { Array(String($0).utf8) }
        }
    }

    private static func encodedWord(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?" + Data(bytes).base64EncodedString() + "?="
    }
}
