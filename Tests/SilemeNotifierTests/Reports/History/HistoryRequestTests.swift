import Foundation
import Testing
@testable import Values
@testable import Reports

/// `report`'s arguments: defaults, validation and the exit status of each error.
@Suite("History request")
struct HistoryRequestTests {
    static let today = CalendarDate(parsing: "2026-01-13")!

    @Test("--to defaults to today, --from to six days before --to")
    func defaults() throws {
        let week = try HistoryRequest.parse(from: nil, to: nil, user: nil, fullEmails: false, problemLimitPerDay: nil, today: Self.today)
        #expect(week.from.description == "2026-01-07")
        #expect(week.to.description == "2026-01-13")
        #expect(week.days.count == 7)
        let earlier = try HistoryRequest.parse(from: nil, to: "2026-03-01", user: nil, fullEmails: false, problemLimitPerDay: nil, today: Self.today)
        #expect(earlier.from.description == "2026-02-23")
        let one = try HistoryRequest.parse(from: "2026-01-13", to: nil, user: nil, fullEmails: false, problemLimitPerDay: nil, today: Self.today)
        #expect(one.days == [Self.today])
    }

    @Test("invalid arguments are refused with a message that names the option", arguments: [
        ("2026-02-30", nil, nil, "--from must be a real date"),
        (nil, "13/01/2026", nil, "--to must be a real date"),
        ("2026-01-14", "2026-01-13", nil, "--from 2026-01-14 is after --to 2026-01-13"),
        ("2000-01-01", "2026-01-13", nil, "at most 3660 days"),
        (nil, nil, "42; DROP TABLE users", "--user must be a user id"),
        (nil, nil, "0f8a3c2e11114000800000000000000001", "--user must be a user id"),
    ] as [(String?, String?, String?, String)])
    func invalid(from: String?, to: String?, user: String?, message: String) {
        do {
            _ = try HistoryRequest.parse(from: from, to: to, user: user, fullEmails: false, problemLimitPerDay: nil, today: Self.today)
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains(message), "\(error)")
            #expect(error.exitStatus == .usage)
        }
    }

    @Test("a user id is lowercased; the schema error asks for a migration and means exit 78")
    func userAndSchema() throws {
        let request = try HistoryRequest.parse(from: nil, to: nil, user: "0F8A3C2E-1111-4000-8000-000000000001", fullEmails: true,
                                               problemLimitPerDay: 50, today: Self.today)
        #expect(request.userID == "0f8a3c2e-1111-4000-8000-000000000001")
        #expect(request.fullEmails)
        let schema = HistoryError.schemaNotCurrent(detail: "relation \"notifier_runs\" does not exist")
        #expect(schema.exitStatus == .configuration)
        #expect(schema.description.contains("sileme-notifier migrate"))
    }

    @Test("the formats for people limit the listed problem rows, the ones for programs do not")
    func limits() {
        #expect(HistoryFormat.table.problemLimitPerDay == 50)
        #expect(HistoryFormat.html.problemLimitPerDay == 50)
        #expect(HistoryFormat.json.problemLimitPerDay == nil)
        #expect(HistoryFormat.csv.problemLimitPerDay == nil)
    }
}
