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
    /// written, case-insensitive) are parsed, and they are found by one search over the file
    /// lower-cased once: the file is shared by every test of a run and grows to tens of
    /// thousands of lines (15 MB after two runs on one environment), and splitting and lower-casing
    /// it line by line on each poll took over a second in a debug build — long enough to make a
    /// waiting test see a run late.
    static func deliveries(maildir: String, mentioning needle: String, recipient matches: (String) -> Bool) -> [Delivery] {
        let path = "\(maildir)/deliveries.jsonl"
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return [] }
        // Lower-cased by the (optimised) standard library, searched by Foundation's: a debug
        // build's own loops over 15 MB are what was slow.
        let lowered = Data(String(decoding: data, as: UTF8.self).lowercased().utf8)
        guard lowered.count == data.count else { return slowDeliveries(data, maildir: maildir, needle: needle, matches: matches) }
        let pattern = Data(needle.lowercased().utf8)
        var lines: [Range<Int>] = []
        var from = lowered.startIndex
        while let hit = lowered.range(of: pattern, in: from..<lowered.endIndex) {
            let start = lowered.range(of: Data([10]), options: .backwards, in: lowered.startIndex..<hit.lowerBound)?.upperBound
                ?? lowered.startIndex
            let end = lowered.range(of: Data([10]), in: hit.upperBound..<lowered.endIndex)?.lowerBound ?? lowered.endIndex
            lines.append(start..<end)
            from = end
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
