import Foundation
import Testing
import TestSupport
@testable import Values
@testable import Rule
@testable import Config
@testable import Mail

/// docs/rule.md and docs/mail.md as a property over hostile data: for thousands of generated user names, emergency
/// emails, user ids and sender names (`HostileInputs`, seeded and deterministic), the product either
/// rejects the user with a reason (`invalid_email` / `invalid_name`), or builds a message that an
/// independent parser (Python's `email`, `PythonMailParser`) reads back with exactly the intended
/// headers, addresses, Subject, MIME structure and bodies — and that keeps RFC 5322's line rules.
///
/// The seed is printed; `SILEME_FUZZ_SEED=N` reruns a sequence and `SILEME_FUZZ_CASES=N` changes
/// how many random inputs follow the fixed corpus.
@Suite("Hostile names and emails (fuzz)", .enabled(if: PythonMailParser.isAvailable))
struct HostileMailFuzzTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["SILEME_FUZZ_SEED"].flatMap { UInt64($0) } ?? 20_260_113
    static let randomCases: Int = ProcessInfo.processInfo.environment["SILEME_FUZZ_CASES"].flatMap { Int($0) } ?? 3000
    static let domain = "example.com"
    static let runDate = CalendarDate(parsing: "2026-01-13")!
    static let lastCheckIn = CalendarDate(parsing: "2026-01-10")!  // m = 2
    static let date = Date(timeIntervalSince1970: 1_768_266_000)
    static let configTemplates = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/templates")

    /// Where the sender's display name comes from.
    enum SenderName: CaseIterable {
        /// `FROM_NAME` unset: the default 一键打卡团队.
        case standard
        /// `FROM_NAME` set to the user's cleaned name.
        case cleaned
        /// `FROM_NAME` set to the raw hostile text (when the configuration accepts it); the
        /// composer cleans it like a user's name.
        case raw
    }

    /// One generated input.
    struct Input {
        let name: String?
        let email: String?
        let userID: String
        let sender: SenderName
        let html: Bool

        var shown: String {
            "name \(DebugText.literal(name)), email \(DebugText.literal(email)), user id \(DebugText.literal(userID, limit: 60)), "
                + "FROM_NAME \(sender), html \(html)"
        }
    }

    /// What the message built for an accepted input must read back as.
    struct Expected {
        let input: Input
        let rawEmail: String
        let subject: String
        let fromName: String
        let to: String
        let messageID: String
        let text: String
        let html: String?
    }

    static let headersSinglePart = ["Date", "From", "To", "Subject", "Message-ID", "MIME-Version", "Auto-Submitted",
                                    "X-Auto-Response-Suppress", "Content-Type", "Content-Transfer-Encoding"]
    static let headersMultipart = Array(headersSinglePart.dropLast())

    /// The fixed corpus (every hostile name with a good email, every hostile email with a good name,
    /// NULLs), then `randomCases` random inputs.
    static func inputs() -> [Input] {
        var rng = SeededGenerator(seed: seed)
        var inputs: [Input] = []
        for (index, name) in HostileInputs.names.enumerated() {
            inputs.append(Input(name: name, email: "contact@\(domain)", userID: HostileInputs.randomUserID(using: &rng),
                                sender: SenderName.allCases[index % 3], html: index % 2 == 0))
        }
        for (index, email) in HostileInputs.emails(domain: domain).enumerated() {
            inputs.append(Input(name: "王小明", email: email, userID: HostileInputs.randomUserID(using: &rng),
                                sender: .standard, html: index % 2 == 1))
        }
        inputs.append(Input(name: nil, email: "contact@\(domain)", userID: "null-name", sender: .standard, html: false))
        inputs.append(Input(name: "王小明", email: nil, userID: "null-email", sender: .standard, html: false))
        for _ in 0..<randomCases {
            inputs.append(Input(name: HostileInputs.randomName(using: &rng),
                                email: HostileInputs.randomEmail(domain: domain, using: &rng),
                                userID: HostileInputs.randomUserID(using: &rng),
                                sender: rng.pick(SenderName.allCases), html: rng.chance(25)))
        }
        return inputs
    }

    @Test("every hostile input is rejected with a reason, or its message parses to exactly the intended headers and body")
    func hostileInputs() throws {
        print("HostileMailFuzz: seed \(Self.seed) (rerun with SILEME_FUZZ_SEED=\(Self.seed)), \(Self.randomCases) random inputs after the corpus")
        let htmlDirectory = try Self.htmlTemplateDirectory()
        defer { try? FileManager.default.removeItem(at: htmlDirectory) }
        let textTemplates = try MailTemplates(directory: nil)
        let htmlTemplates = try MailTemplates(directory: htmlDirectory.path)
        let htmlSource = try String(contentsOf: Self.configTemplates.appendingPathComponent("body.html.mustache.example"), encoding: .utf8)
        let rule = MissRule(thresholdDays: 2, catchUpDays: 7)

        var tally = FuzzTally()
        var messages: [[UInt8]] = []
        var expectations: [Expected] = []
        let inputs = Self.inputs()
        for input in inputs {
            let candidate = Candidate(userID: input.userID, rawName: input.name, rawEmail: input.email,
                                      lastCheckIn: Self.lastCheckIn, notifiedInStreak: false)
            let evaluation = try #require(rule.evaluate(candidate, runDate: Self.runDate))
            guard evaluation.decision == .send, let name = evaluation.name, let email = evaluation.email else {
                #expect(evaluation.reason != nil, "a rejection always has a reason: \(input.shown)")
                tally.reject("\(evaluation.decision.rawValue): \(evaluation.reason ?? "no reason")")
                continue
            }
            var environment = ["FROM_EMAIL": "noreply@sileme.app"]
            switch input.sender {
            case .standard: break
            case .cleaned: environment["FROM_NAME"] = name.value
            case .raw: environment["FROM_NAME"] = input.name
            }
            let configuration: NotifierConfiguration
            do { configuration = try ConfigurationLoader(environment: environment, filePath: nil).load() } catch {
                #expect(input.sender == .raw && error.setting == "FROM_NAME", "\(error): \(input.shown)")
                tally.reject("FROM_NAME refused by the configuration: \(error.reason)")
                continue
            }
            tally.accept()
            let composer = try MailComposer(configuration.mail, templates: input.html ? htmlTemplates : textTemplates)
            let job = DeliveryJob(userID: input.userID, name: name, email: email, missedDays: evaluation.missedDays,
                                  lastCheckIn: candidate.lastCheckIn)
            let messageID = composer.newMessageID(for: job, runDate: Self.runDate)
            let bytes = composer.message(for: job, runDate: Self.runDate, messageID: messageID, date: Self.date).rendered()
            for problem in Self.lineProblems(bytes) { tally.fail(problem.kind, problem.detail, input: input.shown) }
            messages.append(bytes)
            expectations.append(Expected(
                input: input, rawEmail: input.email ?? "", subject: "[一键打卡] 关于 \(name.value) 的签到提醒",
                fromName: (try? DisplayName(cleaning: configuration.fromName).value) ?? "", to: email.address,
                messageID: messageID,
                text: Self.substitute(MailTemplates.defaultText, userName: name.value),
                html: input.html ? Self.substitute(htmlSource, userName: Self.htmlEscaped(name.value)) : nil))
        }

        let parsed = try PythonMailParser.parse(messages)
        let oracle = try PythonMailParser.asciiAddresses(expectations.map(\.rawEmail))
        try #require(parsed.count == expectations.count && oracle.count == expectations.count)
        for ((expected, message), asciiAddress) in zip(zip(expectations, parsed), oracle) {
            for problem in Self.parserProblems(message, expected: expected, oracleAddress: asciiAddress) {
                tally.fail(problem.kind, problem.detail, input: expected.input.shown)
            }
        }

        print("HostileMailFuzz (seed \(Self.seed)): \(tally.summary)")
        #expect(tally.tried == inputs.count)
        #expect(tally.accepted > 0 && tally.rejectedCount > 0, "the generator must produce both kinds of input")
        let brokenInvariants = tally.failures.count
        #expect(brokenInvariants == 0, Comment(rawValue: "seed \(Self.seed): \(tally.failures.count) broken invariants; "
            + "the first of each kind:\n" + tally.failureReport))
    }

    /// RFC 5322 line rules on the raw bytes: CRLF only (no bare CR or LF), no line over 998 octets,
    /// a 7-bit header block whose lines stay within 78 characters (except `Message-ID` and `To`,
    /// which cannot be folded), no blank or whitespace-only line inside the header block, base64
    /// body lines of at most 76 characters.
    static func lineProblems(_ bytes: [UInt8]) -> [Problem] {
        var problems: [Problem] = []
        for (index, byte) in bytes.enumerated() {
            if byte == 0x0A, index == 0 || bytes[index - 1] != 0x0D { problems.append(("bare LF", "at octet \(index)")) }
            if byte == 0x0D, index + 1 == bytes.count || bytes[index + 1] != 0x0A { problems.append(("bare CR", "at octet \(index)")) }
        }
        if bytes.suffix(2) != [0x0D, 0x0A] { problems.append(("no final CRLF", "")) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let separator = text.range(of: "\r\n\r\n") else { return problems + [("no header/body separator", "")] }
        let head = text[..<separator.lowerBound]
        if !head.utf8.allSatisfy({ $0 < 0x80 }) { problems.append(("8-bit header", "")) }
        for line in head.components(separatedBy: "\r\n") {
            if line.utf8.count > 78, !line.hasPrefix("Message-ID: "), !line.hasPrefix("To: ") {
                problems.append(("header line over 78", "\(line.utf8.count) characters: \(DebugText.literal(line, limit: 60))"))
            }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { problems.append(("blank header line", "")) }
            if line.utf8.count > 998 { problems.append(("line over 998", "\(line.utf8.count) octets: \(DebugText.literal(line, limit: 60))")) }
        }
        for line in text[separator.upperBound...].components(separatedBy: "\r\n") where line.utf8.count > 76 {
            problems.append(("body line over 76", "\(line.utf8.count) octets"))
        }
        return problems
    }

    /// A broken invariant: a short fixed label and the details.
    typealias Problem = (kind: String, detail: String)

    /// What Python's reading of the message must be, compared with `expected`.
    static func parserProblems(_ message: PythonMailParser.Parsed, expected: Expected, oracleAddress: String) -> [Problem] {
        var problems: [Problem] = []
        func check(_ condition: Bool, _ kind: String, _ detail: @autoclosure () -> String) {
            if !condition { problems.append((kind, detail())) }
        }
        if let error = message.error { return [("unreadable", error)] }
        let multipart = expected.html != nil
        check(message.headerNames == (multipart ? headersMultipart : headersSinglePart), "header names", "\(message.headerNames)")
        check(message.headerDefects.isEmpty, "header defects", "\(message.headerDefects)")
        check(message.defects.isEmpty, "MIME defects", "\(message.defects)")
        check(message.from == [.init(name: expected.fromName, address: "noreply@sileme.app")],
              "From", "\(message.from.map { $0.map { "\(DebugText.literal($0.name)) <\($0.address)>" } } ?? ["missing"]), "
                + "expected name \(DebugText.literal(expected.fromName))")
        check(message.to == [.init(name: "", address: expected.to)],
              "To", "\(message.to.map { $0.map { "\(DebugText.literal($0.name)) <\($0.address)>" } } ?? ["missing"]), expected \(expected.to)")
        check(expected.to == oracleAddress, "address", "normalised to \(expected.to), Python's IDNA/Punycode says \(oracleAddress)")
        check(message.headers["Subject"] == [expected.subject],
              "Subject", "\(DebugText.literal(message.headers["Subject"]?.first)), expected \(DebugText.literal(expected.subject))")
        check(message.invisibleInSubject.isEmpty, "invisible in Subject", "\(message.invisibleInSubject)")
        check(message.invisibleInNames.isEmpty,
              "invisible in display name", "\(message.invisibleInNames)")
        check(message.headers["Message-ID"] == ["<\(expected.messageID)>"], "Message-ID", "\(message.headers["Message-ID"] ?? [])")
        let idParts = expected.messageID.split(separator: "@", omittingEmptySubsequences: false)
        check(idParts.count == 2 && idParts.allSatisfy(isDotAtom) && expected.messageID.utf8.count <= 200,
              "Message-ID syntax", "\(DebugText.literal(expected.messageID)) is not a short dot-atom@dot-atom")
        check(message.headers["MIME-Version"] == ["1.0"], "MIME-Version", "\(message.headers["MIME-Version"] ?? [])")
        check(message.headers["Auto-Submitted"] == ["auto-generated"], "Auto-Submitted", "\(message.headers["Auto-Submitted"] ?? [])")
        check(message.dateParsed, "Date", "did not parse: \(message.headers["Date"] ?? [])")
        check(message.contentType == (multipart ? "multipart/alternative" : "text/plain") && message.isMultipart == multipart,
              "content type", "\(message.contentType)")
        let subtypes = multipart ? ["text/plain", "text/html"] : ["text/plain"]
        check(message.parts.map(\.contentType) == subtypes, "parts", "\(message.parts.map(\.contentType))")
        for part in message.parts {
            check(part.charset?.lowercased() == "utf-8", "charset", "\(part.charset ?? "none") of \(part.contentType)")
            check(part.transferEncoding == "base64", "transfer encoding", "\(part.transferEncoding ?? "none") of \(part.contentType)")
        }
        let bodies = message.parts.map { $0.content.map(crlf) }
        check(bodies.first == crlf(expected.text),
              "text body", "\(DebugText.literal(message.parts.first?.content, limit: 200)), expected \(DebugText.literal(expected.text, limit: 200))")
        if let html = expected.html {
            check(bodies.count == 2 && bodies[1] == crlf(html), "HTML body", "\(DebugText.literal(bodies.last ?? nil, limit: 300))")
        }
        return problems
    }

    /// RFC 5322 `dot-atom-text`: `atext` runs separated by single dots.
    static func isDotAtom(_ text: Substring) -> Bool {
        text.split(separator: ".", omittingEmptySubsequences: false)
            .allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(EmailAddress.isAtext) }
    }

    /// A template's text with `{{user_name}}`, `{{miss_days}}` (2), `{{last_check_in_date}}`,
    /// `{{run_date}}` and `{{app_name}}` replaced in one pass over the template — plain string
    /// substitution, not Mustache, and never inside an inserted value.
    static func substitute(_ template: String, userName: String) -> String {
        // No input of this test is after a pause: the `paused_until` section renders nothing.
        let template = template.replacingOccurrences(of: "\\{\\{#paused_until\\}\\}.*?\\{\\{/paused_until\\}\\}", with: "",
                                                     options: .regularExpression)
            // Nor has ACK_BASE_URL: the acknowledgement link's section (standalone lines) renders nothing.
            .replacingOccurrences(of: "(?s)\\{\\{#ack_url\\}\\}\n.*?\\{\\{/ack_url\\}\\}\n", with: "", options: .regularExpression)
        let values = ["user_name": userName, "miss_days": "2", "last_check_in_date": "2026-01-10",
                      "run_date": "2026-01-13", "app_name": "一键打卡"]
        var out = ""
        var rest = template[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            out += rest[..<open.lowerBound]
            let key = String(rest[open.upperBound..<close.lowerBound])
            out += values[key] ?? String(rest[open.lowerBound..<close.upperBound])
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// HTML escaping of `& < > " '` (as Mustache writes them), one Unicode scalar at a time, so a
    /// combining mark after a special character cannot shield it.
    static func htmlEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// CRLF line ends throughout (the renderer's normalisation), scalar by scalar: CR LF, a lone CR
    /// and a lone LF all become CR LF.
    static func crlf(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var previousCR = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": out.append(contentsOf: "\r\n".unicodeScalars); previousCR = true
            case "\n": if !previousCR { out.append(contentsOf: "\r\n".unicodeScalars) }; previousCR = false
            default: out.append(scalar); previousCR = false
            }
        }
        return String(out)
    }

    /// A template folder with the shipped subject and text templates and the HTML example.
    static func htmlTemplateDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-tpl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (source, target) in [("zh-Hans/subject.mustache", "subject.mustache"), ("zh-Hans/body.txt.mustache", "body.txt.mustache"),
                                 ("body.html.mustache.example", "body.html.mustache")] {
            try FileManager.default.copyItem(at: configTemplates.appendingPathComponent(source),
                                             to: directory.appendingPathComponent(target))
        }
        return directory
    }
}
