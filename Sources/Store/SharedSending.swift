import Foundation
import Values

/// Runs whose sending other daemons may join (docs/delivery.md, "Several daemons share an
/// instant's sending"). One daemon holds the run lock and makes the run: it alone decides what a
/// run decides — the guards, the skips, the intake guard's holds, the introductions — in its first
/// pass. Then it opens its sending to the others (`open`); a daemon that finds the lock taken
/// reads the runs open now (`open(_:dates:)`) and, for a run of the same run date and slots as its
/// own, reads the same due set from its other end and sends what it claims: each message's claim
/// gives it to one daemon only.
package enum SharedSending {
    /// A run open to others: its row, run date and slots (nil: everyone), and the messages its
    /// second pass streams (the alerts and their webhook events, as its first pass counted them).
    package struct Run: Sendable, Equatable {
        package let id: Int64
        package let runDate: CalendarDate
        package let slots: [String]?
        package let jobs: Int

        package init(id: Int64, runDate: CalendarDate, slots: [String]?, jobs: Int) {
            self.id = id
            self.runDate = runDate
            self.slots = slots
            self.jobs = jobs
        }

        /// Whether this is the run of `runDate` for `slots` (the same slots in any order).
        package func serves(_ runDate: CalendarDate, slots: [String]?) -> Bool {
            self.runDate == runDate && self.slots.map(Set.init) == slots.map(Set.init)
        }

        /// The run a daemon joins among `open` for its own runs of an instant (`wanted`: run date
        /// and slots, in the order it would make them): the first of its runs that one of them
        /// serves, unless it joined that one already (`joined`: a daemon helps a run once; when it
        /// is done the rest is the holder's messages in flight). Nil: none to join now. Pure.
        package static func choose(among open: [Run], for wanted: [(runDate: CalendarDate, slots: [String]?)],
                                   joined: Set<Int64>) -> Run? {
            for run in wanted {
                if let found = open.first(where: { $0.serves(run.runDate, slots: run.slots) && !joined.contains($0.id) }) {
                    return found
                }
            }
            return nil
        }
    }

    /// What a daemon that finds the run lock taken sees.
    package struct Look: Sendable, Equatable {
        /// Whether a run holds the lock now (when not, the daemon decides afresh at once).
        package let lockHeld: Bool
        /// The runs open to others now.
        package let open: [Run]

        package init(lockHeld: Bool, open: [Run]) {
            self.lockHeld = lockHeld
            self.open = open
        }
    }

    /// Opens the run `id` to other daemons: it streams `jobs` messages from now on.
    package static func open(_ db: PGConnection, runID id: Int64, jobs: Int) throws {
        try db.execute(SQLStatement("""
            UPDATE sileme.notifier_runs SET sending_since = now(), sending_jobs = $jobs
            WHERE id = $id AND status = 'running'
            """), ["id": String(id), "jobs": String(jobs)])
    }

    /// Whether the run lock is held, and the daemon runs of `dates` open to others: still running,
    /// started under the lock's present holder (a run whose holder died leaves its row `running`;
    /// its lock was taken over since, or is free). One probe of the lock's row and of the runs'
    /// date index. Reads only.
    package static func look(_ db: PGConnection, dates: [CalendarDate]) throws -> Look {
        let held = RunLock.heldCondition("l")
        let rows = try db.execute(SQLStatement("""
            SELECT coalesce(\(held), false) AS lock_held, r.id, r.run_date, array_to_json(r.slots)::text AS slots, r.sending_jobs
            FROM sileme.notifier_run_lock l
            LEFT JOIN sileme.notifier_runs r
                   ON r.run_date = ANY($dates::date[]) AND r.status = 'running' AND r.mode = 'daemon'
                  AND r.sending_since IS NOT NULL AND r.started_at >= l.acquired_at AND \(held)
            WHERE l.id = 1
            ORDER BY r.started_at DESC, r.id DESC
            """), ["dates": PGArray.literal(dates.map(\.description))]).rows
        let open = rows.compactMap { row -> Run? in
            guard let id = row.string("id").flatMap({ Int64($0) }), let date = row.date("run_date") else { return nil }
            let slots = row.string("slots").flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) }
            return Run(id: id, runDate: date, slots: slots, jobs: row.int("sending_jobs") ?? 0)
        }
        return Look(lockHeld: rows.first?.bool("lock_held") ?? false, open: open)
    }
}
