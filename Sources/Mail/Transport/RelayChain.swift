import Config
import Curl
import Foundation
import Values

/// Mail through the first of several relays that can take it: `SMTP_HOST`, then
/// `SMTP_FALLBACK`'s in order (docs/delivery.md, "Fallback relays").
///
/// Why: one relay is one point of failure. When the provider is down for hours, every alert of
/// the morning would wait in `retry`. A message moves to the next relay only when the current one
/// failed **as a relay** (`SendOutcome.isRelayFailure`: unreachable, TLS, AUTH, `421`, a refused
/// session or `MAIL FROM`) — never when it refused the recipient or the message (a dead address
/// would be tried on every relay) and never when the outcome is unknown (the relay may have taken
/// it; sent elsewhere it could arrive twice). A relay that failed so rests for
/// `SMTP_FALLBACK_RETRY`: the messages after it start at the next one, and it is tried first again
/// when its rest is over. The rests are the process's (`Board.shared`), so every worker and every
/// run of a daemon agree; the claim, the `Message-ID` and the once-per-message rules are the
/// dispatcher's, unchanged.
///
/// Blocking; one chain per worker thread, each relay's connection made when first needed.
package final class RelayChain: MailTransport {
    /// A relay that failed as a relay, and the one the message went to next (nil: none was left).
    package struct Failover: Sendable, Equatable {
        /// The relay that failed (its URL, `SMTPSettings.url`).
        package var from: String
        /// The relay tried next.
        package var to: String?
        /// Its reply or libcurl's reason.
        package var reason: String
    }

    /// The relays' rests, shared by every chain of the process.
    package final class Board: Sendable {
        /// The process's board.
        package static let shared = Board()
        private let restingUntil = Locked<[String: Date]>([:])

        /// An empty board (tests make their own).
        package init() {}

        /// When `relay`'s rest ends; nil when it is not resting.
        package func rest(of relay: String, now: Date = Date()) -> Date? {
            restingUntil.withLock { $0[relay].flatMap { $0 > now ? $0 : nil } }
        }

        /// `relay` failed as a relay: it rests until `until`.
        package func failed(_ relay: String, until: Date) { restingUntil.withLock { $0[relay] = until } }

        /// `relay` took a message: it is usable again.
        package func accepted(_ relay: String) { restingUntil.withLock { $0[relay] = nil } }
    }

    private let relays: [SMTPSettings]
    private let board: Board
    private let retry: TimeInterval
    private let onFailover: @Sendable (Failover) -> Void
    private let connect: (SMTPSettings) throws(MailError) -> any MailTransport
    private var transports: [(any MailTransport)?]
    private var hearing: (stop: StopSignal, onWait: @Sendable () -> Void)?
    /// The relay that answered the last `send` (its URL).
    package private(set) var relay: String?
    /// The relays the last `send` passed over.
    package private(set) var passedOver: [String] = []

    /// A chain over `relays` (the primary first), resting a relay that failed as a relay for
    /// `retry`, telling `onFailover` each time a message passes one over.
    /// `connect` makes a relay's transport (an SMTP connection; tests give their own).
    package init(relays: [SMTPSettings], retry: Duration, board: Board = .shared,
                 connect: @escaping (SMTPSettings) throws(MailError) -> any MailTransport = { settings throws(MailError) in
                     try SMTPTransport(settings: settings)
                 },
                 onFailover: @escaping @Sendable (Failover) -> Void = { _ in }) {
        self.connect = connect
        precondition(!relays.isEmpty, "RelayChain: at least one relay")
        self.relays = relays
        self.board = board
        self.retry = Double(retry.components.seconds) + Double(retry.components.attoseconds) / 1e18
        self.onFailover = onFailover
        transports = Array(repeating: nil, count: relays.count)
    }

    /// The order to try the relays in at `now` — pure: those not resting, in their order, then
    /// the resting ones, in theirs (when every relay rests, each is still worth a try before the
    /// message waits for a later pass).
    package static func order(resting: [Bool]) -> [Int] {
        resting.indices.filter { !resting[$0] } + resting.indices.filter { resting[$0] }
    }

    package func send(from sender: String, to recipient: String, message: [UInt8]) -> SendOutcome {
        let now = Date()
        let order = Self.order(resting: relays.map { board.rest(of: $0.url, now: now) != nil })
        var outcome = SendOutcome.transient(reason: "no relay was tried", serverUnavailable: true)
        passedOver = []
        for (step, index) in order.enumerated() {
            let url = relays[index].url
            relay = url
            do {
                outcome = try transport(index).send(from: sender, to: recipient, message: message)
            } catch {
                outcome = .transient(reason: error.message, serverUnavailable: true)
            }
            guard outcome.isRelayFailure else {
                if case .accepted = outcome { board.accepted(url) }
                return outcome
            }
            board.failed(url, until: Date().addingTimeInterval(retry))
            passedOver.append(url)
            let next = order.dropFirst(step + 1).first.map { relays[$0].url }
            onFailover(Failover(from: url, to: next, reason: outcome.text))
        }
        return outcome
    }

    package func hear(_ stop: StopSignal, onWait: @escaping @Sendable () -> Void) {
        hearing = (stop, onWait)
        for transport in transports { transport?.hear(stop, onWait: onWait) }
    }

    /// Relay `index`'s connection, made when first needed and hearing the run's stop signal.
    private func transport(_ index: Int) throws(MailError) -> any MailTransport {
        if let made = transports[index] { return made }
        let made = try connect(relays[index])
        if let hearing { made.hear(hearing.stop, onWait: hearing.onWait) }
        transports[index] = made
        return made
    }
}
