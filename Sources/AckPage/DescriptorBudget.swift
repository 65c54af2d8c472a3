import Config
import Foundation

/// The process's file descriptors, shared between the page and the alerting.
///
/// A process that runs out of descriptors does not fail one request: libdispatch's worker
/// monitor crashes it on purpose when it cannot open `/proc/<tid>/stat`, and the alerting dies
/// with the page. So the page holds at most `ACK_MAX_CONNECTIONS` connections (closing the rest as
/// soon as they are accepted), and that cap must leave `reserve(for:)` of the process's limit for
/// the database sessions, the mail and webhook connections, the journal and the runtime
/// (docs/acknowledgement.md, "Limits").
package enum DescriptorBudget {
    /// The soft and hard `RLIMIT_NOFILE`.
    package struct Limit: Sendable, Equatable {
        package var soft: Int
        package var hard: Int

        package init(soft: Int, hard: Int) {
            self.soft = soft
            self.hard = hard
        }
    }

    /// The soft limit asked for at start: the hard limit, at most this (a process with a million
    /// descriptors allowed gains nothing, and some libraries walk every possible descriptor).
    package static let ceiling = 65_536

    /// The soft limit to ask for, given the current limit (never lower than it is).
    package static func wanted(_ limit: Limit) -> Int { max(limit.soft, min(limit.hard, ceiling)) }

    /// The descriptors kept for everything but the page: at least 256, and more where the daemon
    /// may hold more — its database sessions (`DatabaseSessions`), and for each of its senders
    /// (a run's and an all-clear pass's, `SMTP_CONNECTIONS` each) a mail and a webhook connection,
    /// plus 64 for the journal, the zone files and the runtime's own (an idle daemon holds ~40).
    package static func reserve(for configuration: NotifierConfiguration) -> Int {
        max(256, DatabaseSessions(configuration).daemonDirect + 4 * configuration.smtp.connections + 64)
    }

    /// Nil when `maxConnections` page connections and the reserve fit in `limit.soft`; else what
    /// is wrong, for an error naming `ACK_MAX_CONNECTIONS`.
    package static func problem(maxConnections: Int, limit: Limit, reserve: Int = 256) -> String? {
        guard maxConnections + reserve > limit.soft else { return nil }
        return "\(maxConnections) page connections and the \(reserve) descriptors kept for the database, mail and journal "
            + "need \(maxConnections + reserve), but the process may open only \(limit.soft) (RLIMIT_NOFILE; hard limit "
            + "\(limit.hard)): lower ACK_MAX_CONNECTIONS to at most \(max(0, limit.soft - reserve)) or raise the limit "
            + "(LimitNOFILE= in the unit)"
    }

    /// Raises the soft limit towards `wanted` (as far as the hard limit and the sandbox allow:
    /// the shipped unit sets `LimitNOFILE=` itself and forbids `setrlimit`) and returns the limit
    /// then in force.
    package static func raise() -> Limit {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Limit(soft: 1024, hard: 1024) }
        let current = Limit(soft: Self.count(limit.rlim_cur), hard: Self.count(limit.rlim_max))
        let target = wanted(current)
        if target > current.soft {
            var raised = limit
            raised.rlim_cur = rlim_t(target)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Limit(soft: target, hard: current.hard) }
        }
        return current
    }

    private static func count(_ value: rlim_t) -> Int { value == rlim_t.max || value > rlim_t(Int.max) ? Int.max : Int(value) }
}
