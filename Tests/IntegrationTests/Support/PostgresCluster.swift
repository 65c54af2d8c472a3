import Foundation

/// A PostgreSQL cluster of one test's own, which the test may stop, start and restart — the
/// shared test server must stay up for everyone else. Made with the same binaries as the shared
/// one (`initdb` as the `postgres` user, trust authentication on 127.0.0.1, fsync off); removed
/// when the value goes away.
final class PostgresCluster: @unchecked Sendable {
    /// The cluster's folder (the data directory is `data` inside it).
    let directory: String
    /// Its TCP port on 127.0.0.1.
    let port: Int
    private let pgBin: String

    /// Creates and starts the cluster; with `standbyOf`, a hot standby streaming from that
    /// cluster (`pg_basebackup -R`), read-only.
    init(standbyOf primary: PostgresCluster? = nil) throws {
        pgBin = try TestEnvironment.require().pgBin
        directory = "/var/tmp/sn-cluster-" + UUID().uuidString.lowercased().prefix(8)
        port = try Self.freePort()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.shell(["/bin/chown", "postgres:postgres", directory])
        try Self.shell(["/bin/chmod", "700", directory])
        if let primary {
            try asPostgres(["\(pgBin)/pg_basebackup", "-D", "\(directory)/data", "-h", "127.0.0.1", "-p", String(primary.port),
                            "-U", "postgres", "-R", "-X", "stream", "--no-sync"])
        } else {
            try asPostgres(["\(pgBin)/initdb", "-D", "\(directory)/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                            "--no-locale", "--no-sync", "--no-instructions"])
        }
        let settings = """

            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(directory)'
            fsync = off
            synchronous_commit = off
            full_page_writes = off
            max_connections = 100

            """
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(directory)/data/postgresql.conf"))
        handle.seekToEndOfFile()
        handle.write(Data(settings.utf8))
        try handle.close()
        try start()
    }

    /// A connection URL for `database` on this cluster.
    func url(_ database: String = "postgres") -> String { "postgresql://postgres@127.0.0.1:\(port)/\(database)" }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        try asPostgres(["\(pgBin)/pg_ctl", "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "60", "start"])
    }

    /// Stops the server (`-m fast`: sessions are disconnected, as on a service restart).
    func stop() throws {
        try asPostgres(["\(pgBin)/pg_ctl", "-D", "\(directory)/data", "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Restarts the server: every session is dropped, new ones are refused until it is back.
    func restart() throws {
        try asPostgres(["\(pgBin)/pg_ctl", "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-m", "fast",
                        "-w", "-t", "60", "restart"])
    }

    deinit {
        _ = try? asPostgres(["\(pgBin)/pg_ctl", "-D", "\(directory)/data", "-m", "immediate", "-w", "-t", "30", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func asPostgres(_ arguments: [String]) throws {
        try Self.shell(["runuser", "-u", "postgres", "--"] + arguments)
    }

    /// Runs a command from `/`, throwing with its output if it fails. Spawned and reaped here
    /// (not with Foundation's `Process`, which was seen to leave `runuser` unreaped when the
    /// server that `pg_ctl start` forks outlives it); the output goes to a file, not a pipe, which
    /// that server would hold open forever.
    static func shell(_ arguments: [String]) throws {
        let path = "/tmp/cluster-\(UUID().uuidString).log"
        defer { unlink(path) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // From `/`: the postgres user may not be allowed into the current folder.
        let command = ["/bin/sh", "-c", "cd / && exec \"$@\"", "sh"] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestFailure("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // Exited normally with status 0 (WIFEXITED and WEXITSTATUS, spelled out for Swift).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let text = FileManager.default.contents(atPath: path) ?? Data()
            throw TestFailure("\(arguments.joined(separator: " ")) failed (\(status)): \(String(decoding: text, as: UTF8.self))")
        }
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now (a `SilentServer`'s, closed again).
    static func freePort() throws -> Int { try SilentServer().port }
}
