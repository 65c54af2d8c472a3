import Foundation
import Values

extension WebhookTransport {
    /// What happened to one webhook request.
    package enum Outcome: Sendable, Equatable {
        /// The endpoint answered 2xx: delivered.
        case delivered(status: Int)
        /// Worth trying again: 408, 425, 429 or 5xx, or no usable answer (connection refused or
        /// dropped, TLS failure, timeout, the process stopping). `retryAfter` is the endpoint's
        /// `Retry-After` in seconds (at most `maximumRetryAfter`), when it gave one.
        case transient(reason: String, retryAfter: TimeInterval?)
        /// The endpoint refused the event for good: any other 4xx, or a 3xx (redirects are not
        /// followed: a moved endpoint is the operator's to fix). Status 0: refused before sending
        /// (an id that is not a valid `webhook-id`).
        case permanent(status: Int, reason: String)

        /// The longest `Retry-After` honoured: a later one is cut to this.
        package static let maximumRetryAfter: TimeInterval = 3600
        /// How much of a response body a reason quotes.
        package static let quotedBodyLength = 200

        /// Whether a transient outcome's `reason` says the endpoint answered (an HTTP status) rather
        /// than not at all (the connection, TLS, a timeout, the process stopping).
        package static func answered(_ reason: String) -> Bool { reason.hasPrefix("HTTP ") || reason.hasPrefix("unexpected HTTP ") }

        /// The status or failure in words.
        package var reason: String {
            switch self {
            case .delivered(let status): "HTTP \(status)"
            case .transient(let reason, _), .permanent(_, let reason): reason
            }
        }

        /// Classifies one request: curl code 0 with 2xx is delivered; 408, 425, 429 and 5xx are
        /// transient, other 3xx and 4xx permanent; any curl error is transient (the connection,
        /// TLS, a timeout: nothing or not all of an answer came).
        ///
        /// `body` is the start of the response body, quoted (one line, at most
        /// `quotedBodyLength` characters) in the reason. The caller redacts the reason.
        static func classify(curlCode: Int, curlMessage: String, status: Int, retryAfter: String?, body: [UInt8],
                             now: Date) -> Outcome {
            guard curlCode == 0 else { return .transient(reason: "curl error \(curlCode): \(curlMessage)", retryAfter: nil) }
            let quoted = quote(body)
            let reason = "HTTP \(status)" + (quoted.isEmpty ? "" : ": \(quoted)")
            switch status {
            case 200...299:
                return .delivered(status: status)
            case 408, 425, 429, 500...599:
                return .transient(reason: reason, retryAfter: retryAfter.flatMap { Self.retryAfter($0, now: now) })
            case 300...399:
                return .permanent(status: status, reason: reason + " (redirects are not followed)")
            case 400...499:
                return .permanent(status: status, reason: reason)
            default:
                return .transient(reason: "unexpected " + reason, retryAfter: nil)
            }
        }

        /// `body` as one line of at most `quotedBodyLength` characters: invalid UTF-8 replaced,
        /// control characters and runs of white space turned into single spaces.
        static func quote(_ body: [UInt8]) -> String {
            var line = String.UnicodeScalarView()
            var space = false
            for scalar in String(decoding: body, as: UTF8.self).unicodeScalars {
                if scalar.properties.isWhitespace || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    space = !line.isEmpty
                    continue
                }
                if space { line.append(" ") }
                space = false
                line.append(scalar)
            }
            let text = String(line)
            return text.count > quotedBodyLength ? String(text.prefix(quotedBodyLength)) + "…" : text
        }

        /// The seconds a `Retry-After` value asks for (RFC 9110 §10.2.3): a number of seconds, or
        /// an HTTP date (IMF-fixdate, or the obsolete RFC 850 and asctime forms) counted from
        /// `now`, a date in the past as 0. At most `maximumRetryAfter`; nil when it is neither.
        package static func retryAfter(_ value: String, now: Date) -> TimeInterval? {
            let text = value.trimmingCharacters(in: .whitespaces)
            if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                // Any number of digits: a value too large for Int is beyond the cap all the same.
                return min(Double(text) ?? maximumRetryAfter, maximumRetryAfter)
            }
            guard let date = httpDate(text) else { return nil }
            return min(max(0, date.timeIntervalSince(now)), maximumRetryAfter)
        }

        /// An HTTP date in any of its three forms: `Sun, 06 Nov 1994 08:49:37 GMT`,
        /// `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`.
        static func httpDate(_ text: String) -> Date? {
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            let parts = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" || $0 == ":" }).map(String.init)
            let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
            guard let weekday = parts.first, days.contains(where: { weekday == $0 || weekday.hasPrefix($0) && weekday.hasSuffix("day") })
            else { return nil }
            var (day, month, year, clock) = ("", "", "", [String]())
            if parts.count == 8 && parts[7] == "GMT" {
                (day, month, year, clock) = (parts[1], parts[2], parts[3], Array(parts[4...6]))
            } else if parts.count == 7 {
                (month, day, clock, year) = (parts[1], parts[2], Array(parts[3...5]), parts[6])
            } else {
                return nil
            }
            let numbers = ([day, year] + clock).map { $0.utf8.allSatisfy { (0x30...0x39).contains($0) } ? Int($0) : nil }
            guard let monthIndex = months.firstIndex(of: month), numbers.allSatisfy({ $0 != nil }), [2, 4].contains(year.count) else {
                return nil
            }
            var fullYear = numbers[1]!
            if year.count == 2 { fullYear += fullYear < 70 ? 2000 : 1900 }
            let (hour, minute, second) = (numbers[2]!, numbers[3]!, numbers[4]!)
            guard hour < 24, minute < 60, second < 61,
                  let date = CalendarDate(year: fullYear, month: monthIndex + 1, day: numbers[0]!) else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(date.dayNumber * 86400 + hour * 3600 + minute * 60 + second))
        }
    }
}
