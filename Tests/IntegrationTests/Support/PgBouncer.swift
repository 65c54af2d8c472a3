import Foundation

/// A real PgBouncer (Debian's `pgbouncer`) of one test's own, in session or transaction pooling
/// mode, in front of the shared test server (or a test's `PostgresCluster`): the notifier reaches
/// the database the way Supabase's pooled connection strings make it. Trust authentication for
/// `postgres` and the roles named; stopped and removed when the value goes away.
final class PgBouncer: @unchecked Sendable {
    /// PgBouncer's `pool_mode`.
    enum Mode: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A server connection per client connection, reset when the client leaves.
        case session
        /// A server connection per transaction: session state does not survive a statement.
        case transaction
        var description: String { rawValue }
    }

    /// The pooling mode.
    let mode: Mode
    /// Its TCP port on 127.0.0.1.
    let port: Int
    private let directory: String

    /// Starts PgBouncer in `mode` in front of the server on `upstreamPort`, letting `roles` (and
    /// `postgres`) in without a password, with at most `poolSize` server connections per database
    /// and user (`default_pool_size`; nil: PgBouncer's default, 20).
    init(mode: Mode, upstreamPort: String? = nil, roles: [String] = [], poolSize: Int? = 40) throws {
        let env = try TestEnvironment.require()
        self.mode = mode
        port = try PostgresCluster.freePort()
        directory = "/var/tmp/sn-pgbouncer-" + UUID().uuidString.lowercased().prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let users = (["postgres"] + roles).map { "\"\($0)\" \"\"" }.joined(separator: "\n") + "\n"
        try users.write(toFile: "\(directory)/userlist.txt", atomically: true, encoding: .utf8)
        let ini = """
            [databases]
            * = host=127.0.0.1 port=\(upstreamPort ?? env.pgPort)

            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(directory)/userlist.txt
            pool_mode = \(mode.rawValue)
            max_client_conn = 400
            \(poolSize.map { "default_pool_size = \($0)" } ?? "")
            logfile = \(directory)/pgbouncer.log
            pidfile = \(directory)/pgbouncer.pid
            ignore_startup_parameters = extra_float_digits

            """
        try ini.write(toFile: "\(directory)/pgbouncer.ini", atomically: true, encoding: .utf8)
        try PostgresCluster.shell(["/bin/chown", "-R", "postgres:postgres", directory])
        // PgBouncer refuses to run as root; -d forks it into the background once it listens.
        try PostgresCluster.shell(["runuser", "-u", "postgres", "--", "/usr/sbin/pgbouncer", "-d", "-q", "\(directory)/pgbouncer.ini"])
        let deadline = Date().addingTimeInterval(10)
        while pid == nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        guard pid != nil else { throw TestFailure("pgbouncer did not start: \(log)") }
    }

    /// A connection URL for `database` through the pooler, as `role`.
    func url(_ database: String, role: String = "postgres") -> String { "postgresql://\(role)@127.0.0.1:\(port)/\(database)" }

    /// PgBouncer's own log (for failure messages).
    var log: String { (try? String(contentsOfFile: "\(directory)/pgbouncer.log", encoding: .utf8)) ?? "" }

    private var pid: pid_t? {
        (try? String(contentsOfFile: "\(directory)/pgbouncer.pid", encoding: .utf8))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    deinit {
        if let pid {
            kill(pid, SIGTERM)  // immediate shutdown
            let deadline = Date().addingTimeInterval(5)
            while kill(pid, 0) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
