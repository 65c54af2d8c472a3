import Foundation

/// A real IMAP and POP3 server (Debian's `dovecot-imapd` and `dovecot-pop3d` 2.3) of one test's own:
/// its own configuration (`dovecot -c FILE`), a `passwd-file` user whose Maildir the test fills,
/// IMAPS and POP3S on free ports of 127.0.0.1 with a self-signed certificate for 127.0.0.1.
/// Stopped and removed by `stop()`.
final class Dovecot: @unchecked Sendable {
    /// The IMAPS and POP3S ports on 127.0.0.1.
    let port: Int, pop3Port: Int
    /// The user and password the test logs in with.
    let user = "bounces", password = "Mailbox-pw-4711"
    /// The user's Maildir (`new/`, `cur/`, `tmp/`).
    let maildir: String
    /// The certificate to verify the server with.
    let caFile: String
    private let directory: String

    /// Whether Dovecot is installed (scripts/install-deps.sh installs it).
    static var isAvailable: Bool {
        ["/usr/sbin/dovecot", "/usr/lib/dovecot/imap", "/usr/lib/dovecot/pop3"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }

    /// A server of its own; `serving` an existing Maildir (one a real Postfix delivers into, owned
    /// by `nobody` as this server's user is) instead of a new one.
    init(serving existing: String? = nil) throws {
        port = try PostgresCluster.freePort()
        pop3Port = try PostgresCluster.freePort()
        directory = "/var/tmp/sn-dovecot-" + UUID().uuidString.lowercased().prefix(8)
        maildir = existing ?? "\(directory)/mail/bounces"
        caFile = "\(directory)/cert.pem"
        for sub in ["new", "cur", "tmp"] { try FileManager.default.createDirectory(atPath: "\(maildir)/\(sub)", withIntermediateDirectories: true) }
        try FileManager.default.createDirectory(atPath: "\(directory)/run", withIntermediateDirectories: true)
        try PostgresCluster.shell(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                                   "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", "\(directory)/key.pem", "-out", caFile])
        try "\(user):{PLAIN}\(password):65534:65534::\(maildir)\n".write(toFile: "\(directory)/passwd", atomically: true, encoding: .utf8)
        let conf = """
            protocols = imap pop3
            base_dir = \(directory)/run
            state_dir = \(directory)/state
            instance_name = sn-dovecot-\(port)
            listen = 127.0.0.1
            log_path = \(directory)/dovecot.log
            ssl = required
            ssl_cert = <\(caFile)
            ssl_key = <\(directory)/key.pem
            auth_mechanisms = plain login
            passdb {
              driver = passwd-file
              args = scheme=PLAIN \(directory)/passwd
            }
            userdb {
              driver = passwd-file
              args = \(directory)/passwd
            }
            mail_location = maildir:~
            first_valid_uid = 1
            service imap-login {
              inet_listener imap {
                port = 0
              }
              inet_listener imaps {
                address = 127.0.0.1
                port = \(port)
                ssl = yes
              }
            }
            service pop3-login {
              inet_listener pop3 {
                port = 0
              }
              inet_listener pop3s {
                address = 127.0.0.1
                port = \(pop3Port)
                ssl = yes
              }
            }
            service anvil {
              chroot =
            }
            service stats {
              chroot =
            }

            """
        try conf.write(toFile: "\(directory)/dovecot.conf", atomically: true, encoding: .utf8)
        if existing == nil { try PostgresCluster.shell(["/bin/chown", "-R", "nobody:nogroup", "\(directory)/mail"]) }
        try start()
    }

    /// Starts the master on this instance's configuration and waits until IMAPS answers (again,
    /// after `crash`: the same ports, the same Maildir).
    func start() throws {
        try PostgresCluster.shell(["/usr/sbin/dovecot", "-c", "\(directory)/dovecot.conf"])
        let deadline = Date().addingTimeInterval(10)
        while !listening && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        guard listening else { throw TestFailure("dovecot did not start: \((try? String(contentsOfFile: "\(directory)/dovecot.log", encoding: .utf8)) ?? "")") }
    }

    /// SIGKILL to the master and to every process it started, as a crash or an OOM kill would end
    /// it: sessions cut mid-command, nothing flushed. The processes are found by their parent and
    /// by the master's process group (a child forked while the kill is sent is in it too, and one
    /// left alive keeps the listeners' sockets: the restart then fails with "Dovecot is already
    /// running?"), and killed until none is left alive.
    func crash() {
        guard let text = try? String(contentsOfFile: "\(directory)/run/master.pid", encoding: .utf8),
              let master = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), master > 1 else { return }
        let group = getpgid(master)
        // Never the test's own group (a master that did not start a session of its own).
        let ownGroup = group > 1 && group != getpgrp()
        let deadline = Date().addingTimeInterval(5)
        var doomed = [master]
        repeat {
            if ownGroup { kill(-group, SIGKILL) }
            for pid in doomed { kill(pid, SIGKILL) }
            Thread.sleep(forTimeInterval: 0.05)
            doomed = Self.alive { pid, parent, processGroup in
                pid == master || parent == master || (ownGroup && processGroup == group)
            }
        } while !doomed.isEmpty && Date() < deadline
        while listening && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        // The killed master may stay a zombie here (no init reaps it), which Dovecot would take
        // for a running master: its pid file goes, as an operator's restart after a crash finds it.
        try? FileManager.default.removeItem(atPath: "\(directory)/run/master.pid")
        // So may a killed session that held the Maildir's dotlock (`dovecot-uidlist.lock`): Dovecot
        // overrides a lock whose process is gone at once, but a zombie's pid still answers, and the
        // next session waits for the lock to go stale (minutes: the reader's command timed out).
        // Reaped, as on a machine with an init, the lock would be overridden: it goes here.
        let locks = FileManager.default.enumerator(atPath: maildir)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".lock") } ?? []
        for lock in locks { try? FileManager.default.removeItem(atPath: "\(maildir)/\(lock)") }
    }

    /// The processes not yet dead (zombies left out: they hold no socket) that `matches` takes,
    /// by pid, parent pid and process group, from `/proc`.
    private static func alive(_ matches: (pid_t, pid_t, pid_t) -> Bool) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // The fields after the command's closing parenthesis: state, parent's pid, process group.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, fields[0] != "Z", fields[0] != "X",
                  let parent = pid_t(fields[1]), let group = pid_t(fields[2]), matches(pid, parent, group) else { return nil }
            return pid
        }
    }

    /// Delivers `bytes` into the user's `new/` as the MTA would (owned by the mail user).
    func deliver(_ bytes: [UInt8], name: String) throws {
        let path = "\(maildir)/new/\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try PostgresCluster.shell(["/bin/chown", "nobody:nogroup", path])
    }

    /// Stops the server and removes its folder: SIGTERM to its master (by the pid in its own
    /// `master.pid`), SIGKILL after 3 s — a master spawned from the test process may inherit a
    /// blocked SIGTERM — and its children end with it.
    func stop() {
        if let text = try? String(contentsOfFile: "\(directory)/run/master.pid", encoding: .utf8),
           let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1 {
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(3)
            while kill(pid, 0) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            // The children notice their master's end and exit; give them a moment before the folder goes.
            Thread.sleep(forTimeInterval: 0.2)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var listening: Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
