import Logging
import Testing
@testable import Systemd

@Suite("JournalLogHandler")
struct JournalLogHandlerTests {
    @Test("metadata keys become valid journald field names", arguments: [
        ("run_date", "RUN_DATE"), ("notifier_event", "NOTIFIER_EVENT"), ("_private", "PRIVATE"), ("9lives", "LIVES"),
        ("a-b.c", "A_B_C"), ("名字", nil),
    ] as [(String, String?)])
    func fieldNames(key: String, expected: String?) {
        #expect(JournalLogHandler.fieldName(key) == expected)
    }

    @Test("field names are capped at 64 characters")
    func long() {
        #expect(JournalLogHandler.fieldName(String(repeating: "a", count: 100))?.count == 64)
    }

    @Test("levels map to syslog priorities")
    func priorities() {
        #expect(JournalLogHandler.priority(.error) == 3)
        #expect(JournalLogHandler.priority(.warning) == 4)
        #expect(JournalLogHandler.priority(.notice) == 5)
        #expect(JournalLogHandler.priority(.info) == 6)
        #expect(JournalLogHandler.priority(.debug) == 7)
    }
}
