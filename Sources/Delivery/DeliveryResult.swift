import Rule

/// What one job came to in the dispatcher.
package enum JobOutcome: Sendable {
    case sent, failedTransiently, failedPermanently, serverUnavailable, busyElsewhere
    /// The claim's re-check found the user no longer due (a check-in, pause or newer account during the run).
    case cancelled
}

/// The dispatcher's tally, shared by its workers under a lock.
package struct DeliveryResult: Sendable {
    package var sent = 0
    package var failedTransiently = 0
    package var failedPermanently = 0
    package var serverUnavailable = 0
    package var busyElsewhere = 0
    /// Users deleted since the evaluation (no row, no mail).
    package var gone = 0
    /// Users whose claim statement failed (skipped with the reason; due again at the next run).
    package var claimErrors = 0
    /// Jobs the claim's re-check left out: the user is no longer due.
    package var cancelled = 0
    /// Messages in a row that failed because the server (or webhook endpoint) was unusable, per
    /// channel (drives each channel's give-up limit).
    package var consecutiveUnavailable: [DeliveryJob.Channel: Int] = [:]
    /// Jobs never claimed because the run was asked to stop (still due; the next run takes them).
    package var notStarted = 0
    /// The rows of the accepted messages (their contacts are marked `ok` after the sends).
    package var acceptedLogIDs: [Int64] = []
    /// Messages accepted, by kind.
    package var sentByKind: [DeliveryJob.Kind: Int] = [:]
    /// Messages failed (transiently, for good or with the server unavailable), by kind.
    package var failedByKind: [DeliveryJob.Kind: Int] = [:]
    /// Webhook events delivered and failed (the other counts above are of mails; busy, gone,
    /// cancelled and claim errors are of both channels).
    package var webhookSent = 0
    package var webhookFailed = 0
    /// Worker failures (database lost, transport could not be created).
    package var errors: [any Error] = []

    /// Jobs handled so far, whatever the outcome.
    package var handled: Int {
        sent + failedTransiently + failedPermanently + serverUnavailable + busyElsewhere + gone + claimErrors + cancelled
            + webhookSent + webhookFailed
    }

    package mutating func add(_ outcome: JobOutcome, kind: DeliveryJob.Kind = .alert, channel: DeliveryJob.Channel = .email) {
        if channel == .webhook {
            switch outcome {
            case .sent: webhookSent += 1
            case .failedTransiently, .failedPermanently, .serverUnavailable: webhookFailed += 1
            case .busyElsewhere: busyElsewhere += 1
            case .cancelled: cancelled += 1
            }
            return
        }
        switch outcome {
        case .sent: sentByKind[kind, default: 0] += 1
        case .failedTransiently, .failedPermanently, .serverUnavailable: failedByKind[kind, default: 0] += 1
        default: break
        }
        switch outcome {
        case .sent: sent += 1
        case .failedTransiently: failedTransiently += 1
        case .failedPermanently: failedPermanently += 1
        case .serverUnavailable: serverUnavailable += 1
        case .busyElsewhere: busyElsewhere += 1
        case .cancelled: cancelled += 1
        }
    }
}
