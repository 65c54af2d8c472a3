import Testing
@testable import Store

@Suite("SQLStatement: named parameters")
struct SQLStatementTests {
    @Test("names become $1, $2 … in order of first use; a repeated name keeps its number; casts stay")
    func numbering() {
        let statement = SQLStatement("SELECT $run_date::date, $user_ids::uuid[], $run_date::date - 1 WHERE x = $owner")
        #expect(statement.text == "SELECT $1::date, $2::uuid[], $1::date - 1 WHERE x = $3")
        #expect(statement.names == ["run_date", "user_ids", "owner"])
        #expect(statement.parameters(["owner": "me", "run_date": "2026-01-13", "user_ids": nil]) == ["2026-01-13", nil, "me"])
    }

    @Test("quotes, comments and numbered parameters are left alone")
    func leftAlone() {
        let statement = SQLStatement("""
            SELECT '$not_a_name', "$col", $1 -- this store's own $comment
            FROM t WHERE a = $name
            """)
        #expect(statement.text == """
            SELECT '$not_a_name', "$col", $1 -- this store's own $comment
            FROM t WHERE a = $1
            """)
        #expect(statement.names == ["name"])
    }

    @Test("a $ inside a word is part of an identifier, as PostgreSQL reads it")
    func dollarInsideWord() {
        let statement = SQLStatement("SELECT 1 FROM app$data.sileme_schema_migrations WHERE version = $version")
        #expect(statement.text == "SELECT 1 FROM app$data.sileme_schema_migrations WHERE version = $1")
        #expect(statement.names == ["version"])
    }

    @Test("the tally's stored fields are the notifier_runs columns, each named once")
    func tallyFields() {
        let columns = RunTally.storedFields.compactMap(\.column)
        #expect(Set(columns).count == columns.count && Set(RunTally.fields.map(\.name)).count == RunTally.fields.count)
        #expect(columns.contains("busy_elsewhere") && !columns.contains("failed_permanently"))
        var tally = RunTally()
        tally.count(.sent, kind: .allClear)
        tally.count(.failedPermanently)
        tally.count(.sent, channel: .webhook)
        tally.count(.busyElsewhere, channel: .webhook)
        #expect(tally.sent == 1 && tally.sentToContacts(.allClear) == 1 && tally.failed == 1 && tally.failedPermanently == 1)
        #expect(tally.sent(on: .webhook) == 1 && tally.eventsSent == 1 && tally.busyElsewhere == 1 && tally.handled == 4)
        #expect(tally.sentBy == [RunTally.Key(.allClear, .email): 1, RunTally.Key(.alert, .webhook): 1] && tally.sentToContacts(.alert) == nil)
        #expect(tally.byName.first { $0.name == "failed_permanently" }?.value == 1)
    }
}
