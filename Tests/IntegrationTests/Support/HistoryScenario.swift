import Foundation

/// A week of history written straight into `notifier_runs` and `notification_logs` by SQL, with
/// every kind of row the history report tells apart: sent, failed with the server's reply, a
/// pending retry, a stuck claim (its session gone) and one in flight, skipped users with reasons,
/// rows from before the delivery-state migration (status NULL), a day without a run, a failed
/// run and one still running; Chinese names and a hostile one.
///
/// Days 2026-01-07 … 2026-01-13 (expected counts in `days`).
struct HistoryScenario {
    let db: TestDatabase
    /// Users by letter: a 张三, b 李四, c Carol, d 王五, e 赵六 (bad address), f a long Chinese name,
    /// g 孙七 (a streak nobody recorded), s Stuck, x the hostile name, y in flight.
    let users: [String: String]

    static let hostileName = "<script>alert(\"x\")</script>&"
    static let failedReply = "550 5.1.1 <wang@example.com>: Recipient address rejected: User unknown in virtual mailbox table"
    static let htmlReply = "554 5.7.1 <b>rejected</b> & \"spam\""

    /// Expected per-day counts: date → (runs, sent, failed, retry, sending, skipped, legacy sent, legacy not sent).
    static let days: [(String, [Int])] = [
        ("2026-01-07", [1, 2, 0, 0, 0, 0, 0, 0]),
        ("2026-01-08", [0, 0, 0, 0, 0, 0, 0, 0]),
        ("2026-01-09", [1, 1, 1, 0, 0, 1, 0, 0]),
        ("2026-01-10", [1, 0, 0, 1, 1, 0, 0, 0]),
        ("2026-01-11", [0, 1, 0, 0, 0, 0, 1, 1]),
        ("2026-01-12", [1, 3, 0, 0, 0, 2, 0, 0]),
        ("2026-01-13", [1, 0, 1, 0, 1, 0, 0, 0]),
    ]
    /// Expected distribution of m: m → (sent, not sent).
    static let missDays: [Int: (Int, Int)] = [0: (1, 0), 2: (5, 5), 3: (0, 2), 4: (0, 1), 5: (1, 0), 6: (0, 1)]

    init(_ db: TestDatabase) throws {
        self.db = db
        var users: [String: String] = [:]
        let people: [(String, String, String, [String])] = [
            ("a", "张三", "zhang@example.com", ["2026-01-03", "2026-01-08", "2026-01-09", "2026-01-10"]),
            ("b", "李四", "li@example.com", ["2026-01-04"]),
            ("c", "Carol", "carol@example.org", ["2026-01-06"]),
            ("d", "王五", "wang@example.com", ["2026-01-06"]),
            ("e", "赵六", "bad@", ["2026-01-06"]),
            ("f", "名字很长很长很长的用户", "long@example.com", ["2026-01-09"]),
            ("g", "孙七", "sun@example.com", ["2026-01-01", "2026-01-06"]),
            ("s", "Stuck", "stuck@example.com", ["2026-01-07"]),
            ("x", Self.hostileName, "evil@example.com", ["2026-01-10"]),
            ("y", "周八", "zhou@example.com", ["2026-01-10"]),
        ]
        for (key, name, email, checkIns) in people {
            users[key] = try db.addUser(name: name, email: email, checkIns: checkIns)
        }
        self.users = users

        try db.query("""
            INSERT INTO sileme.notifier_runs (run_date, mode, host, pid, started_at, finished_at, status, due, sent, failed,
                                       already_notified, stale, invalid_email, invalid_name, busy_elsewhere, error) VALUES
             ('2026-01-07', 'daemon', 'notifier-1', 100, '2026-01-07 09:00:00+08', '2026-01-07 09:00:03.5+08', 'completed', 2, 2, 0, 0, 0, 0, 0, 0, NULL),
             ('2026-01-09', 'daemon', 'notifier-1', 100, '2026-01-09 09:00:00+08', '2026-01-09 09:00:05+08', 'completed', 2, 1, 1, 0, 0, 1, 0, 0, NULL),
             ('2026-01-10', 'run-now', 'admin-box', 222, '2026-01-10 09:10:00+08', '2026-01-10 09:10:40+08', 'failed', 2, 0, 2, 0, 0, 0, 0, 0,
              'database unreachable: connection to wang@example.com''s server lost'),
             ('2026-01-12', 'daemon', 'notifier-1', 100, '2026-01-12 09:00:00+08', '2026-01-12 09:00:02+08', 'completed', 3, 3, 0, 1, 0, 2, 0, 0, NULL),
             ('2026-01-13', 'daemon', 'notifier-1', 100, '2026-01-13 09:00:00+08', NULL, 'running', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
            """)
        // (user, date, email_sent, m, status, attempts, error/reply, next attempt, sent at, claim pid, L, recipient)
        let rows: [(String, String, Bool, Int, String?, Int, String?, String?, String?, String?, String?, String?)] = [
            ("a", "2026-01-06", true, 2, "sent", 1, nil, nil, "2026-01-06 09:00:02+08", "1", "2026-01-03", "z***@example.com"),
            ("b", "2026-01-07", true, 2, "sent", 1, nil, nil, "2026-01-07 09:00:02+08", "1", "2026-01-04", "l***@example.com"),
            ("c", "2026-01-07", true, 0, "sent", 1, nil, nil, "2026-01-07 09:00:03+08", "1", "2026-01-06", "c***@example.org"),
            ("c", "2026-01-09", true, 2, "sent", 1, nil, nil, "2026-01-09 09:00:02+08", "1", "2026-01-06", "c***@example.org"),
            ("d", "2026-01-09", false, 2, "failed", 1, Self.failedReply, nil, nil, "1", "2026-01-06", "w***@example.com"),
            ("e", "2026-01-09", false, 2, "skipped", 0, "emergency email: missing domain", nil, nil, nil, "2026-01-06", nil),
            ("d", "2026-01-10", false, 3, "retry", 3, "451 4.7.1 Try again later", "2026-01-10 09:15:00+08", nil, "1", "2026-01-06", "w***@example.com"),
            ("s", "2026-01-10", false, 2, "sending", 0, nil, nil, nil, "2147483000", "2026-01-07", "s***@example.com"),
            ("f", "2026-01-11", true, 2, nil, 0, nil, nil, nil, nil, nil, nil),
            ("b", "2026-01-11", false, 6, nil, 0, nil, nil, nil, nil, nil, nil),
            ("a", "2026-01-12", true, 2, "sent", 1, nil, nil, "2026-01-12 09:00:01+08", "1", "2026-01-10", "z***@example.com"),
            ("c", "2026-01-12", true, 5, "sent", 1, nil, nil, "2026-01-12 09:00:01+08", "1", "2026-01-06", "c***@example.org"),
            ("f", "2026-01-12", true, 2, "sent", 2, nil, nil, "2026-01-12 09:00:02+08", "1", "2026-01-09", "l***@example.com"),
            ("e", "2026-01-12", false, 3, "skipped", 0, "emergency email: missing domain", nil, nil, nil, "2026-01-08", nil),
            ("s", "2026-01-12", false, 4, "skipped", 0, "name is empty after cleaning", nil, nil, nil, "2026-01-07", nil),
            ("x", "2026-01-13", false, 2, "failed", 1, Self.htmlReply, nil, nil, "1", "2026-01-10", "e***@example.com"),
            ("y", "2026-01-13", false, 2, "sending", 0, nil, nil, nil, "LIVE", "2026-01-10", "z***@example.com"),
        ]
        for r in rows {
            // "LIVE": the claim of a session that is still there (this test's own connection).
            let pid = r.9 == "LIVE" ? String(db.connection.backendPID) : r.9
            let claimed = r.4 != nil && r.4 != "skipped"
            try db.query("""
                INSERT INTO notification_logs (user_id, notification_date, email_sent, consecutive_miss_days, status, attempts,
                    last_error, last_reply, next_attempt_at, sent_at, message_id, claimed_by, claim_backend_pid, claimed_at,
                    last_check_in_date, recipient_masked)
                VALUES ($1::uuid, $2::date, $3::boolean, $4::int, $5, $6::int, $7, $7, $8::timestamptz, $9::timestamptz, $10,
                        $11, $12::int, $13::timestamptz, $14::date, $15)
                """, [users[r.0]!, r.1, String(r.2), String(r.3), r.4, String(r.5), r.6, r.7, r.8,
                      claimed ? Self.messageID(r.0, r.1) : nil, claimed ? "notifier-1:100" : nil, pid,
                      claimed ? "\(r.1) 09:00:01+08" : nil, r.10, r.11])
        }
    }

    /// The expected `Message-ID` of user `key`'s row on `date`.
    static func messageID(_ key: String, _ date: String) -> String {
        date.replacingOccurrences(of: "-", with: "") + ".\(key)@notifier-1"
    }
}
