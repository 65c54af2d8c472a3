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
    /// written, case-insensitive) are parsed: the file is shared by every test of a run and grows
    /// to tens of thousands of lines, and parsing all of them on each poll made a waiting test late.
    static func deliveries(maildir: String, mentioning needle: String, recipient matches: (String) -> Bool) -> [Delivery] {
        let path = "\(maildir)/deliveries.jsonl"
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let needle = needle.lowercased()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard line.lowercased().contains(needle),
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let recipients = object["rcpt_tos"] as? [String],
                  let recipient = recipients.map({ $0.lowercased() }).first(where: matches) else { return nil }
            let file = object["file"] as? String ?? ""
            return Delivery(recipient: recipient, messageID: object["message_id"] as? String,
                            file: file.hasPrefix("/") ? file : "\(maildir)/\(file)", helo: object["helo"] as? String,
                            mailFrom: object["mail_from"] as? String)
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
