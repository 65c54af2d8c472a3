/// What one claim statement did with a batch of jobs: the rows this session won, the users the
/// claim's re-check found no longer due (`GuardSQL.noLongerDue`), and the users deleted since the
/// evaluation. A job in none of them is someone else's (another live session holds its row, or
/// its retry time has not come).
public struct ClaimBatch: Sendable, Equatable {
    /// The claims won, by user id.
    public var claims: [String: Claim] = [:]
    /// Users not claimed because they are no longer due, with why (`checked_in`, `paused`, `superseded`).
    public var cancelled: [String: String] = [:]
    /// Users deleted (or otherwise gone) from `users` since the evaluation: no row, no mail.
    public var gone: Set<String> = []

    /// An empty batch.
    public init() {}
}
