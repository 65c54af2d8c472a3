/// What one claim statement did with a batch of jobs, by the job's index in the batch: the rows
/// this session won, the jobs the claim's re-check found no longer due (`GuardSQL.noLongerDue`),
/// and the jobs of users deleted since the evaluation. A job in none of them is someone else's
/// (another live session holds its row, its retry time has not come, or it was sent already).
package struct ClaimBatch: Sendable, Equatable {
    /// The claims won.
    package var claims: [Int: Claim] = [:]
    /// Jobs not claimed because their user is no longer due, with why (`checked_in`, `paused`, `superseded`).
    package var cancelled: [Int: String] = [:]
    /// Jobs of users deleted (or otherwise gone) from `users` since the evaluation: no row, no mail.
    package var gone: Set<Int> = []

    /// An empty batch.
    package init() {}
}
