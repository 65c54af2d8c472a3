import Foundation
import Rule
import Values

/// The SQL of the guards of docs/guards.md, written once for every statement that needs it: the
/// other accounts with the same contact address (the batch query and `--preview`), a user's
/// latest trusted check-in (dated at most `D + 1`), and the claim's re-check of a due user.
package enum GuardSQL {
    /// SQL: the latest check-in of user `userID` (an expression) dated at most `trusted` (a date
    /// expression, `D + 1`) — one backward probe of `check_ins`' `(user_id, check_in_date)` index.
    package static func latestTrustedCheckIn(_ userID: String, trusted: String) -> String {
        "(SELECT max(c.check_in_date) FROM check_ins c WHERE c.user_id = \(userID) AND c.check_in_date <= \(trusted))"
    }

    /// SQL: a JSON array of the other users whose contact address equals that of user row `user`
    /// (trimmed, case-insensitive; `users_contact_idx`), each with id, name and latest trusted
    /// check-in — or NULL when `enabled` (a boolean expression) is false or there are none.
    package static func sameContact(_ user: String, trusted: String, enabled: String) -> String {
        """
        (SELECT json_agg(json_build_object('id', b.id::text, 'name', b.name,
                                           'last', \(latestTrustedCheckIn("b.id", trusted: trusted))) ORDER BY b.id)
         FROM users b
         WHERE \(enabled) AND lower(btrim(b.emergency_email)) = lower(btrim(\(user).emergency_email)) AND b.id <> \(user).id)
        """
    }

    /// Decodes `sameContact`'s JSON.
    package static func decodeSameContact(_ text: String?) -> [OtherAccount] {
        struct Row: Decodable { let id: String; let name: String?; let last: String? }
        guard let text, let rows = try? JSONDecoder().decode([Row].self, from: Data(text.utf8)) else { return [] }
        return rows.map { OtherAccount(userID: $0.id, rawName: $0.name, lastCheckIn: $0.last.flatMap(CalendarDate.init(parsing:))) }
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
