import Foundation

/// The mails the SMTP test servers accepted for one test, told apart by a recipient domain of
/// the test's own (`<random>.test.example`), so tests can run in parallel on shared servers.
struct Mailbox {
    /// This test's recipient domain.
    let domain = "t" + UUID().uuidString.lowercased().prefix(12) + ".example.com"
    private let maildir: String

    init() throws { maildir = try TestEnvironment.require().maildir }

    /// An address in this test's domain; put `perm550`, `temp451once`, `data554`, `slowN` in
    /// `local` to make the server fail or wait (see `scripts/testenv/smtp_server.py`).
    func address(_ local: String) -> String { "\(local)@\(domain)" }

    /// One accepted message.
    struct Delivery {
        let recipient: String
        let messageID: String?
        let file: String
        /// The name the client gave in EHLO.
        let helo: String?
        /// The envelope sender (`MAIL FROM`), without angle brackets.
        var mailFrom: String? = nil
        /// The raw message bytes as received.
        var raw: Data { FileManager.default.contents(atPath: file) ?? Data() }
    }

    /// Every message accepted for this test's domain, in arrival order.
    func deliveries() throws -> [Delivery] {
        Self.deliveries(maildir: maildir, mentioning: domain) { $0.hasSuffix("@" + domain) }
    }

    /// Every message in `maildir`'s `deliveries.jsonl` with a recipient (lowercased) that
    /// `matches`, in arrival order, with that recipient. Only lines that contain `needle` (as
    /// written, case-insensitive) are parsed, and they are found by the C library over the file
    /// lower-cased once: the file is shared by every test of a run and grows to tens of
    /// thousands of lines (15 MB after two runs on one environment), and splitting and lower-casing
    /// it line by line on each poll took over a second in a debug build — long enough to make a
    /// waiting test see a run late.
    static func deliveries(maildir: String, mentioning needle: String, recipient matches: (String) -> Bool) -> [Delivery] {
        let path = "\(maildir)/deliveries.jsonl"
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return [] }
        // Lower-cased once by the (optimised) standard library, each line then searched by the C
        // library's strstr with its newline made the line's end: ~40 ms for 15 MB however many
        // lines match, where a debug build's own loops — and Foundation's Data.range(of:), which
        // walks from the start on every call — took seconds.
        var lowered = Array(String(decoding: data, as: UTF8.self).lowercased().utf8)
        guard lowered.count == data.count else { return slowDeliveries(data, maildir: maildir, needle: needle, matches: matches) }
        let count = lowered.count
        lowered.append(0)
        let pattern = needle.lowercased()
        var lines: [Range<Int>] = []
        lowered.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            var start = 0
            while start < count {
                let end = memchr(base + start, 10, count - start).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) } ?? count
                base[end] = 0
                if strstr(UnsafeRawPointer(base + start).assumingMemoryBound(to: CChar.self), pattern) != nil { lines.append(start..<end) }
                start = end + 1
            }
        }
        return lines.compactMap { range in delivery(data.subdata(in: range), maildir: maildir, matches: matches) }
    }

    /// The delivery a line of `deliveries.jsonl` records, when a recipient `matches`.
    private static func delivery(_ line: Data, maildir: String, matches: (String) -> Bool) -> Delivery? {
        guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
              let recipients = object["rcpt_tos"] as? [String],
              let recipient = recipients.map({ $0.lowercased() }).first(where: matches) else { return nil }
        let file = object["file"] as? String ?? ""
        return Delivery(recipient: recipient, messageID: object["message_id"] as? String,
                        file: file.hasPrefix("/") ? file : "\(maildir)/\(file)", helo: object["helo"] as? String,
                        mailFrom: object["mail_from"] as? String)
    }

    /// `deliveries` line by line, for a file whose lower-casing changed its length (a non-ASCII
    /// capital somewhere): slower, never wrong.
    private static func slowDeliveries(_ data: Data, maildir: String, needle: String, matches: (String) -> Bool) -> [Delivery] {
        let needle = needle.lowercased()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.lowercased().contains(needle) ? delivery(Data(line.utf8), maildir: maildir, matches: matches) : nil
        }
    }

    /// The server's RCPT/DATA decisions for this test's domain: (address, code).
    func events() throws -> [(address: String, code: Int)] {
        guard let data = FileManager.default.contents(atPath: "\(maildir)/events.jsonl") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let address = (object["address"] as? String)?.lowercased(), address.hasSuffix("@" + domain),
                  let code = object["code"] as? Int else { return nil }
            return (address, code)
        }
    }
}
