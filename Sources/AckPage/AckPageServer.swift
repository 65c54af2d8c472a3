import Acknowledgement
import Config
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Store
import Systemd
import Texts
import Values

/// The acknowledgement page's HTTP listener inside the daemon (`ACK_LISTEN`, docs/acknowledgement.md), behind
/// the operator's TLS proxy. Hummingbird parses HTTP; this type decides what each request gets:
///
/// - `GET` (and `HEAD`) of `…/<token>`: the page — or the neutral page for any bad token, after
///   the same work (`AckKey.verify`). A GET never writes: mail scanners that open links change nothing.
/// - `POST` of `…/<token>` with the page's anti-forgery field: records the acknowledgement once
///   (`AcknowledgementStore.record`), logs `acknowledgement_recorded`, then redirects to the page
///   (303). Without the field: 403 and the neutral page, nothing recorded.
/// - `GET /healthz`: `ok` (what `check` asks).
/// - More than `ACK_RATE_LIMIT` requests a minute from one client (an IPv4 address, an IPv6 /64):
///   429 with `Retry-After`. A body over 4 KiB (or declared so): 413. A connection is closed when
///   idle for 5 s and after 20 s in all (slow requests are cut off); while `ACK_MAX_CONNECTIONS`
///   are open no new one is accepted (it waits in the kernel's queue), so that the page never
///   takes the descriptors the alerting needs (`DescriptorBudget`).
///
/// A `Service` of the daemon's group: the group's graceful shutdown (SIGTERM raises it through
/// the stop signal) stops it — no new connection, and the connections still open are closed — a
/// client that never finishes its request does not hold the daemon; should anything still run a
/// second later it is abandoned. The daemon stops within 2 s whatever a client does.
///
/// Sendable, checked (the group's task runs it while the scheduler waits for it to listen): only
/// `let`s; whether it listens is `Locked`, and the connections keep their own lock.
package final class AckPageServer: Service, Sendable {
    private let configuration: NotifierConfiguration
    /// The page's texts as the daemon last loaded them (`page.texts`, at start and on each reload).
    private let texts: @Sendable () -> TextTable
    private let listen: AckSettings.Listen
    private let logger: Logger
    /// Whether the page listens (the port), or why not; set once, before `listening` is signalled.
    private let bound = Locked<Result<Int, ConfigurationError>?>(nil)
    private let listening = DispatchSemaphore(value: 0)
    /// Every open client connection, so that a stop can close them (a graceful shutdown alone
    /// waits for each request to end, and a client may never end its own), at most
    /// `ACK_MAX_CONNECTIONS` of them (`ConnectionCap`).
    private let connections: OpenConnections

    /// How long a stop waits for open requests before the listener is abandoned.
    static let stopGrace: TimeInterval = 1
    /// The largest request body (the form has one short field).
    static let maximumBody = 4096
    /// A connection with nothing to read for this long is closed.
    static let idleTimeout = TimeAmount.seconds(5)
    /// A connection is closed this long after it opened, whatever it is doing.
    static let connectionLifetime = TimeAmount.seconds(20)

    /// A server for `configuration`'s `ACK_LISTEN` (nil when it has none). `texts` gives the
    /// page's texts (`TextTable.page`) as the daemon last loaded them from the language folders;
    /// their default language is the service's as the mail templates settled it (`DEFAULT_LANGUAGE`,
    /// or the language `TEMPLATE_DIR` is named by): the page's last choice before simplified Chinese.
    package init?(configuration: NotifierConfiguration, texts: @escaping @Sendable () -> TextTable, logger: Logger) {
        guard let listen = configuration.ack?.listen else { return nil }
        self.configuration = configuration
        self.texts = texts
        self.listen = listen
        self.logger = logger
        connections = OpenConnections()
    }

    /// Waits until the page listens (the socket is bound; the daemon says `READY` after it).
    /// Throws a `ConfigurationError` naming `ACK_LISTEN` when it cannot (the address is in use,
    /// say), or `ACK_MAX_CONNECTIONS` when the descriptors do not allow it.
    package func waitUntilListening() throws(ConfigurationError) {
        listening.wait()
        listening.signal()  // for any later wait
        if case .failure(let error) = bound.withLock({ $0 }) { throw error }
    }

    /// Listens until the group's graceful shutdown, then stops (at most about `stopGrace` later).
    package func run() async {
        if let app = application() {
            // Hummingbird hears the group's graceful shutdown itself (the task inherits it): it
            // stops accepting and quiesces.
            let task = Task {
                do {
                    try await app.run()
                } catch {
                    self.listened(.failure(ConfigurationError(setting: "ACK_LISTEN", reason: "cannot listen on \(self.listen): \(error)")))
                }
            }
            try? await gracefulShutdown()
            // The open requests end now (their clients see the connection close) rather than
            // when their clients please; should the server still run after the grace, it is abandoned.
            connections.closeAll()
            let ended = await withCheckedContinuation { (first: CheckedContinuation<Bool, Never>) in
                let waiting = Locked<CheckedContinuation<Bool, Never>?>(first)
                let end: @Sendable (Bool) -> Void = { ended in waiting.withLock { $0.take() }?.resume(returning: ended) }
                Task { _ = await task.result; end(true) }
                Task { try? await Task.sleep(for: .seconds(Self.stopGrace)); end(false) }
            }
            if !ended { logger.notice("acknowledgement page: a request was still open at the stop; abandoned") }
        } else {
            try? await gracefulShutdown()
        }
    }

    /// Records whether the page listens (the first word counts) and wakes `waitUntilListening`.
    private func listened(_ result: Result<Int, ConfigurationError>) {
        let first = bound.withLock { bound in
            guard bound == nil else { return false }
            bound = result
            return true
        }
        if first { listening.signal() }
    }

    /// The page's application, or nil — its failure recorded — when the descriptors do not allow
    /// `ACK_MAX_CONNECTIONS`.
    private func application() -> (any Service)? {
        // The page's connections may never take the descriptors the alerting needs.
        let limit = DescriptorBudget.raise()
        let cap = configuration.ack?.maxConnections ?? 256
        if let problem = DescriptorBudget.problem(maxConnections: cap, limit: limit,
                                                  reserve: DescriptorBudget.reserve(for: configuration)) {
            listened(.failure(ConfigurationError(setting: "ACK_MAX_CONNECTIONS", reason: problem)))
            return nil
        }
        let responder = AckResponder(configuration: configuration, texts: texts, logger: logger)
        let connections = self.connections
        var http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionRules(after: Self.connectionLifetime, registry: connections)],
            idleTimeout: Self.idleTimeout)
        http.httpDecoder = .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 64)
        var quiet = logger
        quiet.logLevel = .warning  // Hummingbird's own start and stop lines
        let logger = logger, listen = listen
        return Application(
            responder: responder, server: .http1(configuration: http),
            configuration: ApplicationConfiguration(address: .hostname(listen.host, port: listen.port), serverName: nil,
                                                  availableConnectionsDelegate: ConnectionCap(cap: cap, logger: logger)),
            onServerRunning: { [weak self] channel in
                logger.notice("acknowledgement page listening on \(listen): at most \(cap) connections of \(limit.soft) descriptors")
                self?.listened(.success(channel.localAddress?.port ?? 0))
            }, logger: quiet)
    }
}

/// Closes a connection a fixed time after it opened (a client that trickles its request, or
/// keeps a connection for ever, is cut off whatever the idle timer sees), registers it while it
/// is open, for a stop to close it, and puts `HTTPVersionRules` in front of Hummingbird's HTTP
/// types.
final class ConnectionRules: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny
    private let lifetime: TimeAmount
    private let registry: OpenConnections

    init(after lifetime: TimeAmount, registry: OpenConnections) {
        self.lifetime = lifetime
        self.registry = registry
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        registry.add(channel)
        channel.closeFuture.whenComplete { [registry] _ in registry.remove(channel) }
        channel.eventLoop.scheduleTask(in: lifetime) { channel.close(promise: nil) }
        // Right after NIO's request decoder, where the request's HTTP version is still known.
        if let decoder = try? context.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
            try? context.pipeline.syncOperations.addHandler(HTTPVersionRules(), position: .after(decoder))
        }
    }
}

/// The page's connections at most (`ACK_MAX_CONNECTIONS`): Hummingbird's server stops accepting
/// while this many are open, so the rest wait in the kernel's accept queue (and, when it is full,
/// are refused by the kernel) without taking a descriptor of the process. Says so in the log,
/// at most once a minute.
struct ConnectionCap: AvailableConnectionsDelegate {
    let cap: Int
    let logger: Logger
    private var open = 0
    private var reported: TimeInterval = -.infinity

    init(cap: Int, logger: Logger) {
        self.cap = cap
        self.logger = logger
    }

    mutating func connectionOpened() {
        open += 1
        let now = ProcessInfo.processInfo.systemUptime
        if open >= cap && now - reported >= 60 {
            reported = now
            logger.warning("acknowledgement page: \(cap) connections open (ACK_MAX_CONNECTIONS): new ones wait until one closes")
        }
    }

    mutating func connectionClosed() { open -= 1 }

    func isAcceptingNewConnections() -> Bool { open < cap }
}

/// The open client connections of the page.
final class OpenConnections: Sendable {
    private let channels = Locked<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) { channels.withLock { $0[ObjectIdentifier(channel)] = channel } }

    func remove(_ channel: any Channel) { _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) } }

    /// Closes every open connection (a stop: the clients see the connection close).
    func closeAll() {
        for channel in channels.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }
}
