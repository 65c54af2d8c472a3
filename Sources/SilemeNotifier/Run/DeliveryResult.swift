/// What one job came to in the dispatcher.
enum JobOutcome: Sendable {
    case sent, failedTransiently, failedPermanently, serverUnavailable, busyElsewhere
}

/// The dispatcher's tally, shared by its workers under a lock.
struct DeliveryResult: Sendable {
    var sent = 0
    var failedTransiently = 0
    var failedPermanently = 0
    var serverUnavailable = 0
    var busyElsewhere = 0
    /// Messages in a row that failed because the server was unusable (drives the give-up limit).
    var consecutiveUnavailable = 0
    /// Worker failures (database lost, transport could not be created).
    var errors: [any Error] = []

    mutating func add(_ outcome: JobOutcome) {
        switch outcome {
        case .sent: sent += 1
        case .failedTransiently: failedTransiently += 1
        case .failedPermanently: failedPermanently += 1
        case .serverUnavailable: serverUnavailable += 1
        case .busyElsewhere: busyElsewhere += 1
        }
    }
}
