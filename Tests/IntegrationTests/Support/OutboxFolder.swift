import Foundation

/// The files a run wrote into an outbox (`OUTBOX_DIR`), parsed with the independent parser.
struct OutboxFolder {
    /// `OUTBOX_DIR`.
    let path: String

    /// One message file of `new/`.
    struct Message {
        let name: String
        let raw: Data
        let parsed: MailParser.Parsed
        /// The `Message-ID` without angle brackets.
        var messageID: String? { parsed.headers["Message-ID"]?.first?.trimmingCharacters(in: CharacterSet(charactersIn: "<> ")) }
        /// The `To:` address.
        var to: String? { parsed.headers["To"]?.first?.lowercased() }
    }

    /// The names in `sub` (`tmp`, `new`, `cur`), sorted; empty when the folder does not exist.
    func names(_ sub: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "\(path)/\(sub)")) ?? []).sorted()
    }

    /// Every message in `new/`, parsed.
    func messages() throws -> [Message] {
        try names("new").map { name in
            let raw = try Data(contentsOf: URL(fileURLWithPath: "\(path)/new/\(name)"))
            return Message(name: name, raw: raw, parsed: try MailParser.parse(raw))
        }
    }
}
