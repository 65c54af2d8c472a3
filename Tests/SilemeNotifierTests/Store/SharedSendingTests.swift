import Testing
@testable import Store
@testable import Values

/// Which open run a daemon joins (`SharedSending.Run.choose`): pure.
@Suite("Joining another daemon's sending")
struct SharedSendingTests {
    static let day = CalendarDate(parsing: "2026-01-13")!

    static func run(_ id: Int64, _ date: CalendarDate = day, _ slots: [String]? = nil) -> SharedSending.Run {
        SharedSending.Run(id: id, runDate: date, slots: slots, jobs: 100)
    }

    @Test("the run of the same run date and slots, the slots in any order; none of another date or other slots")
    func sameRun() {
        let open = [Self.run(7, Self.day, ["Asia/Shanghai|09:00", "Europe/London|09:00"])]
        #expect(SharedSending.Run.choose(among: open, for: [(Self.day, ["Europe/London|09:00", "Asia/Shanghai|09:00"])], joined: [])?.id == 7)
        #expect(SharedSending.Run.choose(among: open, for: [(Self.day.adding(days: -1), ["Asia/Shanghai|09:00", "Europe/London|09:00"])],
                                         joined: []) == nil)
        #expect(SharedSending.Run.choose(among: open, for: [(Self.day, ["Asia/Shanghai|09:00"])], joined: []) == nil)
        #expect(SharedSending.Run.choose(among: open, for: [(Self.day, nil)], joined: []) == nil, "everyone is not some slots")
        #expect(SharedSending.Run.choose(among: [Self.run(8)], for: [(Self.day, nil)], joined: [])?.id == 8, "everyone's run")
    }

    @Test("a run joined once is not joined again; the daemon's own runs in its order, the first one open wins")
    func onceAndInOrder() {
        let today = Self.run(1, Self.day, ["a"]), yesterday = Self.run(2, Self.day.adding(days: -1), ["b"])
        let wanted: [(runDate: CalendarDate, slots: [String]?)] = [(Self.day, ["a"]), (Self.day.adding(days: -1), ["b"])]
        #expect(SharedSending.Run.choose(among: [yesterday, today], for: wanted, joined: [])?.id == 1)
        #expect(SharedSending.Run.choose(among: [yesterday, today], for: wanted, joined: [1])?.id == 2)
        #expect(SharedSending.Run.choose(among: [yesterday, today], for: wanted, joined: [1, 2]) == nil)
        #expect(SharedSending.Run.choose(among: [], for: wanted, joined: []) == nil)
    }
}
