import Bounce
import Foundation

/// A real Postfix (Debian's `postfix` 3.7) of one test's own, as the relay a real service sends
/// through: its own configuration and queue in a folder of its own (`postfix -c DIR`), SMTP on a
/// free port of 127.0.0.1, never the system's instance. It accepts what the notifier sends and
/// relays each contact domain the test names (`transport_maps`) to an SMTP server — the test
/// environment's plain sink, which answers `550` to a `perm550` recipient after Postfix has
/// already said `250`. Postfix's bounce(8) then writes its report to the tagged envelope sender,
/// `bounces+TAG@notify.sileme.test`, which this same Postfix delivers with virtual(8) into the
/// Maildir `maildir` — the lines docs/bounces.md gives operators. Stopped and removed by `stop()`.
final class Postfix: @unchecked Sendable {
    /// The port the notifier sends to (plain SMTP on 127.0.0.1).
    let port: Int
    /// The bounce mailbox's Maildir (`bounces/` under the virtual mailbox base, with `.Unparsed`).
    let maildir: String
    /// Postfix's own log of this instance (what it did with each message).
    var log: String { (try? String(contentsOfFile: "\(directory)/maillog", encoding: .utf8)) ?? "" }
    private let directory: String
    private var configuration: String { "\(directory)/etc" }

    /// Whether Postfix is installed (scripts/install-deps.sh installs it).
    static var isAvailable: Bool {
        ["/usr/sbin/postfix", "/usr/lib/postfix/sbin/master", "/usr/lib/postfix/sbin/virtual"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
    }

    /// The certificate and key a strict relay offers STARTTLS with.
    struct TLSFiles {
        let certificate: String
        let key: String
    }

    /// What a strict relay refuses or complains of, beyond Postfix's defaults: a bare LF in the
    /// SMTP conversation or the message (from 127.0.0.1 too: the exclusion for `mynetworks` is
    /// emptied), 8-bit bytes in a header, 8-bit bytes in a body not declared `8BITMIME`, commands
    /// sent ahead of a reply where the client may not pipeline, and a client that does not say
    /// EHLO with a valid name or gives an envelope address that is not a full `user@domain`.
    static let strictChecks = [
        "smtpd_forbid_bare_newline = reject", "smtpd_forbid_bare_newline_exclusions =",
        "strict_7bit_headers = yes", "strict_8bitmime_body = yes", "strict_8bitmime = yes",
        "smtpd_forbid_unauth_pipelining = yes", "smtpd_data_restrictions = reject_unauth_pipelining",
        "smtpd_helo_required = yes", "smtpd_helo_restrictions = reject_invalid_helo_hostname",
        "strict_rfc821_envelopes = yes", "smtpd_reject_unlisted_sender = yes",
        "smtpd_sender_restrictions = reject_non_fqdn_sender", "smtpd_recipient_restrictions = reject_non_fqdn_recipient",
    ]

    /// Starts the relay: mail to `domains` goes to the SMTP server on 127.0.0.1:`sinkPort`; mail to
    /// `bounce` (`local@domain`, with any `+tag`) is delivered into `maildir`. With `strictTLS`
    /// the relay takes mail only over STARTTLS with that certificate, and applies `strictChecks`,
    /// as a careful operator's Postfix does. `extra` lines end its `main.cf` (a relay that refuses
    /// the session, or one that drops what it accepts).
    init(relaying domains: [String], to sinkPort: String, bounce: String = BounceStoreIntegrationTests.address,
         strictTLS: TLSFiles? = nil, extra: [String] = []) throws {
        port = try PostgresCluster.freePort()
        directory = "/var/tmp/sn-postfix-" + UUID().uuidString.lowercased().prefix(8)
        let at = bounce.firstIndex(of: "@")!
        let (local, domain) = (String(bounce[..<at]), String(bounce[bounce.index(after: at)...]))
        maildir = "\(directory)/mail/\(local)"
        let manager = FileManager.default
        for sub in ["etc", "mail", "queue", "data"] { try manager.createDirectory(atPath: "\(directory)/\(sub)", withIntermediateDirectories: true) }
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        // The Maildir exists before the first report, as an operator would create it.
        try Maildir(path: maildir).create()
        try PostgresCluster.shell(["/bin/chown", "-R", "nobody:nogroup", "\(directory)/mail"])
        try PostgresCluster.shell(["/bin/chown", "postfix", "\(directory)/data"])
        guard let nobody = getpwnam("nobody") else { throw TestFailure("no user nobody") }
        let (uid, gid) = (nobody.pointee.pw_uid, nobody.pointee.pw_gid)
        let main = """
            compatibility_level = 3.6
            queue_directory = \(directory)/queue
            data_directory = \(directory)/data
            maillog_file = \(directory)/maillog
            maillog_file_prefixes = \(directory)
            mail_owner = postfix
            setgid_group = postdrop
            myhostname = relay.sileme.test
            mydomain = sileme.test
            myorigin = $myhostname
            mydestination =
            inet_interfaces = 127.0.0.1
            inet_protocols = ipv4
            mynetworks = 127.0.0.0/8
            smtpd_relay_restrictions = permit_mynetworks, reject
            smtpd_tls_security_level = \(strictTLS == nil ? "none" : "encrypt")
            smtp_tls_security_level = none
            smtp_dns_support_level = disabled
            disable_dns_lookups = yes
            # The bounce mailbox, as docs/bounces.md gives it.
            recipient_delimiter = +
            virtual_mailbox_domains = \(domain)
            virtual_mailbox_base = \(directory)/mail
            virtual_mailbox_maps = texthash:\(configuration)/bounce-mailbox
            virtual_uid_maps = static:\(uid)
            virtual_gid_maps = static:\(gid)
            # The contacts' domains: to the sink, which refuses the dead mailboxes.
            transport_maps = texthash:\(configuration)/transport
            queue_run_delay = 1s
            minimal_backoff_time = 1s
            maximal_backoff_time = 2s
            notify_classes =

            """ + (strictTLS.map { tls in
                // No local aliases to look a sender up in: the relay delivers nothing locally.
                (["smtpd_tls_cert_file = \(tls.certificate)", "smtpd_tls_key_file = \(tls.key)", "smtpd_tls_received_header = yes",
                  "alias_maps =", "alias_database ="]
                 + Self.strictChecks).joined(separator: "\n") + "\n"
            } ?? "") + extra.map { $0 + "\n" }.joined()
        let services = [
            "127.0.0.1:\(port) inet n - n - - smtpd",
            "pickup unix n - n 60 1 pickup", "cleanup unix n - n - 0 cleanup", "qmgr unix n - n 300 1 qmgr",
            "rewrite unix - - n - - trivial-rewrite", "bounce unix - - n - 0 bounce", "defer unix - - n - 0 bounce",
            "trace unix - - n - 0 bounce", "verify unix - - n - 1 verify", "flush unix n - n 1000? 0 flush",
            "proxymap unix - - n - - proxymap", "smtp unix - - n - - smtp", "relay unix - - n - - smtp",
            "showq unix n - n - - showq", "error unix - - n - - error", "retry unix - - n - - error",
            "discard unix - - n - - discard", "virtual unix - n n - - virtual", "anvil unix - - n - 1 anvil",
            "scache unix - - n - 1 scache", "postlog unix-dgram n - n - 1 postlogd",
        ] + (strictTLS == nil ? [] : ["tlsmgr unix - - n 1000? 1 tlsmgr"])
        try main.write(toFile: "\(configuration)/main.cf", atomically: true, encoding: .utf8)
        try (services.joined(separator: "\n") + "\n").write(toFile: "\(configuration)/master.cf", atomically: true, encoding: .utf8)
        try "\(bounce) \(local)/\n".write(toFile: "\(configuration)/bounce-mailbox", atomically: true, encoding: .utf8)
        try domains.map { "\($0) smtp:[127.0.0.1]:\(sinkPort)\n" }.joined()
            .write(toFile: "\(configuration)/transport", atomically: true, encoding: .utf8)
        try PostgresCluster.shell(["/usr/sbin/postfix", "-c", configuration, "check"])
        try PostgresCluster.shell(["/usr/sbin/postfix", "-c", configuration, "start"])
        let deadline = Date().addingTimeInterval(15)
        while !Self.listening(port) && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        guard Self.listening(port) else { throw TestFailure("postfix did not start: \(log)") }
    }

    /// The files waiting in the Maildir's `new/` and `cur/` (the reports not yet read).
    var waiting: [String] {
        ["new", "cur"].flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(maildir)/\(folder)")) ?? []).filter { !$0.hasPrefix(".") }
        }
    }

    /// Stops the instance (`postfix stop`: its master and every child) and removes its folder; the
    /// master is killed by the pid in its own `master.pid` if it has not gone after 5 s (spawned
    /// from the test process, it may inherit a blocked SIGTERM), and its children end with it.
    func stop() {
        let pidText = try? String(contentsOfFile: "\(directory)/queue/pid/master.pid", encoding: .utf8)
        _ = try? PostgresCluster.shell(["/usr/sbin/postfix", "-c", configuration, "stop"])
        if let pid = pidText.flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), pid > 1 {
            let deadline = Date().addingTimeInterval(5)
            while kill(pid, 0) == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            Thread.sleep(forTimeInterval: 0.3)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func listening(_ port: Int) -> Bool {
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
