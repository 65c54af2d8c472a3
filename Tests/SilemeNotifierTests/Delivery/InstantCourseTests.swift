import Testing
@testable import Delivery
@testable import Store
@testable import Values

/// The course of an instant's runs, pure (`InstantRuns.Course`): whether the next run date's run
/// goes, the exit status, and whether the holds end after them — the daemon's (which stops at a
/// failure and backs off) and a one-shot run's (which goes on) alike.
@Suite("InstantRuns.Course")
struct InstantCourseTests {
    typealias Course = InstantRuns.Course

    static func result(failed: Int = 0, errors: [String] = [], databaseLost: Bool = false) -> RunResult {
        var tally = RunTally()
        tally.failed = failed
        return RunResult(runID: 1, counts: tally, errors: errors, databaseLost: databaseLost, mailServerUnavailable: false)
    }

    @Test("clean runs of everyone: every run goes, the instant is served, the holds end")
    func clean() {
        for afterFailure in [InstantRuns.AfterFailure.stop, .goOn] {
            var course = Course(afterFailure: afterFailure, everyone: true)
            #expect(course.goesOn(stopped: false))
            course.ended(Self.result())
            #expect(course.goesOn(stopped: false))
            course.ended(Self.result())
            #expect(course.status == .success)
            #expect(course.completed(stopped: false))
            #expect(course.endsHolds(stopped: false))
        }
    }

    @Test("runs of some slots only: served, but the holds are not done with")
    func someSlots() {
        var course = Course(afterFailure: .stop, everyone: false)
        course.ended(Self.result())
        #expect(course.completed(stopped: false))
        #expect(!course.endsHolds(stopped: false))
    }

    @Test("failed mails (75) are no failure of the run: the runs go on and the holds end")
    func failedMails() {
        var course = Course(afterFailure: .stop, everyone: true)
        course.ended(Self.result(failed: 2))
        #expect(course.status == .tempFailure)
        #expect(course.goesOn(stopped: false))
        #expect(course.endsHolds(stopped: false))
    }

    @Test("a run with errors: the daemon's runs stop there, a one-shot's go on; nothing is served either way")
    func errors() {
        var daemon = Course(afterFailure: .stop, everyone: true)
        var once = Course(afterFailure: .goOn, everyone: true)
        daemon.ended(Self.result(errors: ["database lost"], databaseLost: true))
        once.ended(Self.result(errors: ["database lost"], databaseLost: true))
        #expect(!daemon.goesOn(stopped: false))
        #expect(once.goesOn(stopped: false))
        once.ended(Self.result())
        #expect(once.status == .unavailable)  // the most serious of the runs
        #expect(!daemon.completed(stopped: false) && !once.completed(stopped: false))
        #expect(!daemon.endsHolds(stopped: false) && !once.endsHolds(stopped: false))
    }

    @Test("a throw ends the runs whatever follows a failure")
    func thrown() {
        for afterFailure in [InstantRuns.AfterFailure.stop, .goOn] {
            var course = Course(afterFailure: afterFailure, everyone: true)
            course.threw()
            #expect(!course.goesOn(stopped: false))
            #expect(!course.endsHolds(stopped: false))
        }
    }

    @Test("a stop: no next run, nothing served, no holds ended — even after clean runs")
    func stopped() {
        var course = Course(afterFailure: .goOn, everyone: true)
        course.ended(Self.result())
        #expect(!course.goesOn(stopped: true))
        #expect(!course.completed(stopped: true))
        #expect(!course.endsHolds(stopped: true))
    }
}
