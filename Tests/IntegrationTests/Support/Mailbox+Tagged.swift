import Foundation

extension Mailbox {
    /// This test's tag: the first label of `domain` (`t` and 12 random hex digits). Put it in the
    /// local part of addresses outside `domain` (IDN domains) to find their mails again.
    var tag: String { String(domain.prefix { $0 != "." }) }

    /// Every message accepted for a recipient that contains `tag` (in `domain` or in any other
    /// domain), in arrival order, with that recipient (lowercased).
    func taggedDeliveries() throws -> [Delivery] {
        let maildir = try TestEnvironment.require().maildir
        guard let data = FileManager.default.contents(atPath: "\(maildir)/deliveries.jsonl") else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let recipients = object["rcpt_tos"] as? [String],
                  let recipient = recipients.first(where: { $0.lowercased().contains(tag) }) else { return nil }
            let file = object["file"] as? String ?? ""
            return Delivery(recipient: recipient.lowercased(), messageID: object["message_id"] as? String,
                            file: file.hasPrefix("/") ? file : "\(maildir)/\(file)")
        }
    }
}
