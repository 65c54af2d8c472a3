import Foundation
import Hashing
import Testing
@testable import AckPage
import Values

/// The page's HTML in the shipped languages, byte for byte: every state the page can show (each
/// branch of `AckPageView.page`, each notice, one day and several, each outcome said by the reader
/// or another) and the neutral page, in `zh-Hans`, `zh-Hant` and `en`, against (the first 64 bits of) the SHA-256 of
/// the HTML recorded in `Fixtures/ack-pages.sha256`. The fixture was written by the page before its
/// words moved into `config/templates/<language>/page.texts`: that the hashes still match is the
/// proof that the move changed no byte. A deliberate change of a shipped text changes hashes:
/// run this suite with `SILEME_WRITE_ACK_GOLDEN=<path of the fixture>` to rewrite it, and commit it
/// with the text. `SILEME_ACK_PAGES_DIR=<folder>` writes every page's HTML there, one file each, to
/// diff two versions of the page.
@Suite("The page's HTML in the shipped languages, byte for byte")
struct AckPageGoldenTests {
    static let languages = ["zh-Hans", "zh-Hant", "en"]
    static let alert = CalendarDate(year: 2026, month: 1, day: 13)!

    /// Every page state: (its name, the model, the notice).
    static var states: [(name: String, model: AckPageView.Model, notice: AckPageView.Notice?)] {
        var states: [(String, AckPageView.Model, AckPageView.Notice?)] = []
        let notices: [(String, AckPageView.Notice?)] = [("-", nil), ("choose", .chooseOne), ("not", .notRecorded), ("nonews", .noNewsYet)]
        let outcomes: [(String, AckPageView.Model.Said?)] = [
            ("-", nil),
            ("ok-me", .init(ok: true, by: "d***@example.com", at: "2026-01-14 08:05", byReader: true)),
            ("un-me", .init(ok: false, by: "d***@example.com", at: "2026-01-14 08:05", byReader: true)),
            ("ok-f", .init(ok: true, by: "f***@example.com", at: "2026-01-14 09:10", byReader: false)),
            ("un-f", .init(ok: false, by: "f***@example.com", at: "2026-01-14 09:10", byReader: false)),
        ]
        for days in [1, 3] {
            for checkedIn in [nil, alert.adding(days: 1)] {
                for readerAt in [nil, "2026-01-13 21:30"] {
                    for otherAt in [nil, "2026-01-13 20:15"] {
                        for (outcomeName, outcome) in outcomes {
                            // The reader may say how it ended only after "I'm on it", before anyone
                            // said it, while the user has not checked in (and the streak records it).
                            let offered = readerAt != nil && outcome == nil && checkedIn == nil
                            for canSay in offered ? [false, true] : [false] {
                                for (noticeName, notice) in notices {
                                    let model = AckPageView.Model(
                                        userName: "张<b>三 & \"O'Neil\"", missedDays: days, lastCheckIn: alert.adding(days: -days),
                                        alertDate: alert, checkedInSince: checkedIn,
                                        recipients: [("d***@example.com", true, readerAt), ("f***@example.com", false, otherAt),
                                                     ("n***@example.com", false, nil)],
                                        readerAcknowledgedAt: readerAt, formField: "F<&>", outcome: outcome, canSayOutcome: canSay)
                                    let name = "d\(days) c\(checkedIn == nil ? 0 : 1) r\(readerAt == nil ? 0 : 1) o\(otherAt == nil ? 0 : 1) "
                                        + "s\(outcomeName) q\(canSay ? 1 : 0) n\(noticeName)"
                                    states.append((name, model, notice))
                                }
                            }
                        }
                    }
                }
            }
        }
        return states
    }

    /// Each page's name and the SHA-256 of its HTML, one line each: every state and the neutral
    /// page in each shipped language, and the Content-Security-Policy.
    static func lines() -> [String] {
        // The first 64 bits of each page's SHA-256: enough to tell pages apart.
        func hash(_ text: String) -> String { SHA256.digest(Array(text.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined() }
        let folder = ProcessInfo.processInfo.environment["SILEME_ACK_PAGES_DIR"]
        var lines = ["csp \(hash(AckPageView.contentSecurityPolicy))"]
        func add(_ name: String, _ html: String) {
            lines.append("\(name) \(hash(html))")
            if let folder { try? html.write(toFile: "\(folder)/\(name.replacingOccurrences(of: " ", with: "_")).html", atomically: true, encoding: .utf8) }
        }
        for language in languages {
            for state in states {
                add("\(language) \(state.name)", page(state.model, language: language, notice: state.notice))
            }
            add("\(language) neutral", neutral(language: language))
        }
        return lines
    }

    static func page(_ model: AckPageView.Model, language: String, notice: AckPageView.Notice?) -> String {
        AckPageView.page(model, in: AckTokenTests.words(language), appName: "A&B <一键打卡>", notice: notice)
    }

    static func neutral(language: String) -> String {
        AckPageView.neutral(in: AckTokenTests.words(language), appName: "A&B <一键打卡>")
    }

    static var fixture: URL { Bundle.module.resourceURL!.appendingPathComponent("Fixtures/ack-pages.sha256") }

    @Test("every page state and the neutral page in zh-Hans, zh-Hant and en: the same bytes as the page before its words were data")
    func sameBytes() throws {
        let lines = Self.lines()
        if let path = ProcessInfo.processInfo.environment["SILEME_WRITE_ACK_GOLDEN"] {
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        let recorded = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == recorded.count && lines.count > 3 * 300, "\(lines.count) pages, \(recorded.count) recorded")
        for (line, expected) in zip(lines, recorded) where line != expected {
            Issue.record("\(line) ≠ \(expected)")
        }
    }
}
