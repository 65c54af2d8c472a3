import Testing
@testable import Store

/// The decision on the notifier's triggers on `check_ins`: nothing to say when all four are
/// there; otherwise which are missing, what it means and the remedy (`migrate`).
@Suite struct CheckInTriggersTests {
    @Test("all four present: no problem")
    func allPresent() {
        #expect(CheckInTriggers.problem(.init(table: "check_ins", partitioned: true, present: Set(CheckInTriggers.names))) == nil)
    }

    @Test("a replaced, partitioned table without them: names the missing ones, the false alarms and migrate")
    func replacedTable() throws {
        let problem = try #require(CheckInTriggers.problem(.init(table: "check_ins", partitioned: true, present: [])))
        #expect(problem.hasPrefix("the notifier's triggers on check_ins (it is partitioned: replaced since the last `migrate`"))
        #expect(problem.contains(CheckInTriggers.names.joined(separator: ", ")))
        #expect(problem.contains("every user who checked in since would be alerted"))
        #expect(problem.contains("Run `sileme-notifier migrate`"))
    }

    @Test("one disabled on a plain table: only that one is named, without the partitioning remark")
    func oneMissing() throws {
        let present = Set(CheckInTriggers.names.filter { $0 != "sileme_queue_check_in" })
        let problem = try #require(CheckInTriggers.problem(.init(table: "app.check_ins", partitioned: false, present: present)))
        #expect(problem.hasPrefix("the notifier's triggers on app.check_ins are missing or disabled: sileme_queue_check_in. "))
    }

    @Test("no check_ins at all")
    func noTable() {
        #expect(CheckInTriggers.problem(.init(table: nil, partitioned: false, present: []))?.contains("no table check_ins") == true)
    }
}
