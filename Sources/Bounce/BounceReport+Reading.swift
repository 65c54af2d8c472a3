extension BounceReport {
    /// Reads the message `bytes`. Larger than `maximumBytes`: `.tooLarge`, unread.
    package static func read(_ bytes: [UInt8]) -> BounceReport {
        guard bytes.count <= maximumBytes else { return BounceReport(verdict: .tooLarge) }
        let message = MIMEPart(message: bytes[...])
        let parts = message.allParts
        var report = BounceReport(verdict: .unparsed, addressedTo: addresses(message.fields))
        report.returnedMessageID = parts.lazy.compactMap(\.enclosedFields).compactMap(messageID).first
        report.canaryTag = message.fields[BounceReport.canaryHeader.lowercased()]?.trimmed
        if let feedback = parts.first(where: { $0.mediaType == "message/feedback-report" }) {
            report.verdict = .complaint
            report.feedbackType = MIMEFields.groups(feedback.decodedBody).first?["feedback-type"]?.lowercased()
            return report
        }
        let statusParts = parts.filter { $0.mediaType == "message/delivery-status" || $0.mediaType == "message/global-delivery-status" }
        if !statusParts.isEmpty || message.fields.contentType.parameters["report-type"]?.lowercased() == "delivery-status" {
            report.recipients = statusParts.flatMap { recipients(MIMEFields.groups($0.decodedBody)) }
            report.verdict = BounceVerdict.report(report.recipients)
            return report
        }
        if BounceVerdict.isAutoReply(message.fields) { report.verdict = .autoReply }
        return report
    }

    /// The recipient blocks among a delivery-status part's groups: those naming a recipient or an
    /// action (the first group is the per-message one; a stray trailing group is dropped).
    static func recipients(_ groups: [MIMEFields]) -> [Recipient] {
        groups.compactMap { group in
            let final = group["final-recipient"].map(address(typed:))
            let original = group["original-recipient"].map(address(typed:))
            let action = group["action"].flatMap { $0.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "(" }).first }.map(String.init)
            guard final != nil || original != nil || action != nil else { return nil }
            return Recipient(finalRecipient: final, originalRecipient: original, action: action, status: group["status"].flatMap(statusCode),
                             diagnostic: group["diagnostic-code"].map(diagnostic))
        }
    }

    /// The address of an `address-type; address` field (`rfc822; a@b`, or a bare `<a@b>`).
    static func address(typed value: String) -> String {
        var text = Substring(value)
        if let semicolon = text.firstIndex(of: ";") { text = text[text.index(after: semicolon)...] }
        var address = text.trimmed
        if address.hasPrefix("<"), address.hasSuffix(">") { address = String(address.dropFirst().dropLast()) }
        return address
    }

    /// The first `d.ddd.ddd` code in a `Status` value (`5.0.0 (permanent failure)` → `5.0.0`); nil when none.
    static func statusCode(_ value: String) -> String? {
        for word in value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "(" }) {
            let numbers = word.split(separator: ".", omittingEmptySubsequences: false)
            guard numbers.count == 3, ["2", "4", "5"].contains(numbers[0]),
                  numbers.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else { continue }
            return String(word)
        }
        return nil
    }

    /// A diagnostic as kept: blanks collapsed, cut at `maximumDiagnostic` characters.
    static func diagnostic(_ value: String) -> String {
        String(value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ").prefix(maximumDiagnostic))
    }

    /// A `Message-ID` without angle brackets; nil when the fields have none.
    static func messageID(_ fields: MIMEFields) -> String? {
        guard var id = fields["message-id"]?.trimmed, !id.isEmpty else { return nil }
        if id.hasPrefix("<"), let close = id.firstIndex(of: ">") { id = String(id[id.index(after: id.startIndex)..<close]) }
        return id.isEmpty ? nil : id
    }

    /// The addresses a message was sent to, most trustworthy first and without repeats: the MTA's
    /// own `X-Original-To`, `Delivered-To` and `Envelope-To`, then the `To` the sender wrote.
    static func addresses(_ fields: MIMEFields) -> [String] {
        var seen: [String] = []
        for name in ["x-original-to", "delivered-to", "envelope-to", "to"] {
            for value in fields.values(name) {
                for address in addresses(in: value) where !seen.contains(address) { seen.append(address) }
            }
        }
        return seen
    }

    /// The `local@domain` words in a header value (display names, brackets and commas dropped).
    static func addresses(in value: String) -> [String] {
        value.split(whereSeparator: { " \t<>,;\"()".contains($0) })
            .filter { $0.contains("@") && !$0.hasPrefix("@") && !$0.hasSuffix("@") }
            .map(String.init)
    }
}
