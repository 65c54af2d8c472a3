import Foundation
import Rule
import Values

/// The SQL of the guards of docs/guards.md, written once for every statement that needs it: the
/// other accounts with the same contact address (the batch query and `--preview`), a user's
/// latest trusted check-in (dated at most `D + 1`), and the claim's re-check of a due user.
package enum GuardSQL {
    /// SQL: the latest check-in of user `userID` (an expression) dated at most `trusted` (a date
    /// expression, `D + 1`) — one backward probe of `check_ins`' `(user_id, check_in_date)` index.
    ///
    /// The last `recentDays` are asked first, the rest only when they hold none (`coalesce`
    /// evaluates its second probe only then): on a `check_ins` partitioned by month a probe reaches
    /// every partition up to `trusted` — pg_partman's default partition keeps PostgreSQL from
    /// stopping at the newest — one index probe each, 36 over three years; bounded to the last
    /// month, pruning leaves two. On a plain table the first probe is the same one probe.
    package static func latestTrustedCheckIn(_ userID: String, trusted: String) -> String {
        """
        coalesce((SELECT max(c.check_in_date) FROM check_ins c
                  WHERE c.user_id = \(userID) AND c.check_in_date <= \(trusted) AND c.check_in_date > \(trusted) - \(recentDays)),
                 (SELECT max(c.check_in_date) FROM check_ins c WHERE c.user_id = \(userID) AND c.check_in_date <= \(trusted)))
        """
    }

    /// How many days before `trusted` the first probe of `latestTrustedCheckIn` covers: a
    /// month, so that it reaches at most two monthly partitions.
    static let recentDays = 31

    /// SQL (a subquery for `LEFT JOIN LATERAL`): the other users whose contact address equals that
    /// of user row `user` (trimmed, case-insensitive; one probe of `users_contact_idx`), as
    /// columns `id` (text), `name` and `last` (latest trusted check-in) — none unless `when` (a
    /// boolean expression over the outer row, evaluated once per row before any probe) holds.
    /// `OFFSET 0` keeps the subquery whole, so that `when` is a one-time filter in front of the
    /// probe (flattened, the planner probed for every row and filtered afterwards).
    package static func otherAccounts(_ user: String, trusted: String, when condition: String = "true") -> String {
        """
        SELECT b.id::text AS id, b.name, \(latestTrustedCheckIn("b.id", trusted: trusted)) AS last
        FROM users b
        WHERE \(condition) AND lower(btrim(b.emergency_email)) = lower(btrim(\(user).emergency_email)) AND b.id <> \(user).id
        OFFSET 0
        """
    }

    /// SQL (a lateral subquery, one row): the user `user`'s rows of `emergency_contacts` in serving
    /// order (`position`, then `id`; at most 5) as one JSON array of `[email, position, tier, language]`, when
    /// `condition` holds (else NULL: the run asks only for users it could send to). One index probe.
    package static func contacts(_ user: String, when condition: String = "true") -> String {
        """
        SELECT json_agg(json_build_array(e.email, e.position, e.tier, e.language) ORDER BY e.position, e.id)::text AS contacts
        FROM (SELECT email, position, tier, language, id FROM emergency_contacts e
              WHERE \(condition) AND e.user_id = \(user).id ORDER BY position, id LIMIT 5) e
        """
    }

    /// SQL: the address `contact` (trimmed, lower-cased) is a contact the user `user` has in force
    /// — a row of `emergency_contacts`, or `users.emergency_email` for a user without any rows.
    package static func contactInForce(user: String, contact: String) -> String {
        """
        (EXISTS (SELECT 1 FROM emergency_contacts e WHERE e.user_id = \(user) AND lower(btrim(e.email)) = \(contact))
         OR (NOT EXISTS (SELECT 1 FROM emergency_contacts e WHERE e.user_id = \(user))
             AND EXISTS (SELECT 1 FROM users f WHERE f.id = \(user) AND lower(btrim(f.emergency_email)) = \(contact))))
        """
    }

    /// SQL: the language the user `user`'s row(s) for the address `contact` (trimmed, lower-cased)
    /// name, NULL when none does — what a mail, a retry and the page to that contact are written in.
    /// The smallest when two rows name two (one address, one reader: any of them is theirs).
    package static func contactLanguage(user: String, contact: String) -> String {
        """
        (SELECT min(ec.language) FROM emergency_contacts ec
         WHERE ec.user_id = \(user) AND lower(btrim(ec.email)) = \(contact) AND ec.language IS NOT NULL)
        """
    }

    /// The contacts of the row's `contacts` column (`contacts(_:when:)`; empty when NULL or unreadable).
    package static func contacts(_ row: PGRow) -> [Candidate.RawContact] {
        guard let text = row.string("contacts"), let data = text.data(using: .utf8),
              let pairs = try? JSONSerialization.jsonObject(with: data) as? [[Any]] else { return [] }
        return pairs.compactMap { pair in
            guard pair.count >= 2, let position = (pair[1] as? NSNumber)?.intValue else { return nil }
            let tier = pair.count > 2 ? (pair[2] as? NSNumber)?.intValue ?? 1 : 1
            return Candidate.RawContact(email: pair[0] as? String, position: position, tier: tier,
                                        language: pair.count > 3 ? pair[3] as? String : nil)
        }
    }

    /// The other account of `otherAccounts`' columns as the statement names them (`other_id`,
    /// `other_name`, `other_last`); nil when the row has none (the outer side of the left join).
    package static func otherAccount(_ row: PGRow) -> OtherAccount? {
        row.string("other_id").map { OtherAccount(userID: $0, rawName: row.string("other_name"), lastCheckIn: row.date("other_last")) }
    }

    // MARK: The claim's re-check

    /// **The claim's re-check** (docs/guards.md, "A check-in during the run"): SQL that is NULL
    /// while the job row `job` is still due on run date `runDate` (a date expression), else why
    /// not — `'checked_in'` (a check-in dated `D` or `D + 1`), `'paused'` (`paused_until ≥ D`) or
    /// `'superseded'` (an account with the same contact address and the job's cleaned name — as
    /// stored, trimmed of spaces — checked in after the job's `L'`, dated at most `D + 1`).
    ///
    /// `job` must have the columns `user_id` (uuid), `since` (date, `L'`) and `name` (text, the
    /// cleaned name); `supersede` is a boolean expression (`SUPERSEDE`). It reads committed data
    /// in the claim statement's own snapshot, so a check-in committed before the claim statement
    /// starts cancels the mail; only mails already claimed can still go out. Every reason it
    /// gives makes the rule's decision something other than `send`, so it never drops an alert
    /// that is still due.
    package static func noLongerDue(job: String, runDate: String, supersede: String) -> String {
        """
        CASE
            WHEN EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = \(job).user_id
                         AND c.check_in_date BETWEEN \(runDate) AND \(runDate) + 1) THEN 'checked_in'
            WHEN EXISTS (SELECT 1 FROM users p WHERE p.id = \(job).user_id AND p.paused_until >= \(runDate)) THEN 'paused'
            WHEN \(supersede) AND EXISTS (
                SELECT 1 FROM users a
                JOIN users b ON lower(btrim(b.emergency_email)) = lower(btrim(a.emergency_email)) AND b.id <> a.id
                WHERE a.id = \(job).user_id AND btrim(b.name) = \(job).name
                  AND EXISTS (SELECT 1 FROM check_ins c WHERE c.user_id = b.id
                              AND c.check_in_date > \(job).since AND c.check_in_date <= \(runDate) + 1)) THEN 'superseded'
        END
        """
    }
}
