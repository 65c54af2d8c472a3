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
/// It hears the daemon's one stop signal: on a stop it shuts down gracefully (no new connection)
/// and closes the connections still open — a client that never finishes its request does not hold
/// the daemon; should anything still run a second later it is abandoned. The daemon stops within
/// 2 s whatever a client does.
package final class AckPageServer: @unchecked Sendable {
    private let configuration: NotifierConfiguration
    private let listen: AckSettings.Listen
    private let logger: Logger
    private let stop: StopSignal
    private let done = DispatchSemaphore(value: 0)
    private let running = Locked<Task<Void, Never>?>(nil)
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

    /// A server for `configuration`'s `ACK_LISTEN` (nil when it has none).
    package init?(configuration: NotifierConfiguration, logger: Logger, stop: StopSignal) {
        guard let listen = configuration.ack?.listen else { return nil }
        self.configuration = configuration
        self.listen = listen
        self.logger = logger
        self.stop = stop
        connections = OpenConnections()
    }

    /// Starts listening; returns once the socket is bound. Throws a `ConfigurationError` naming
    /// `ACK_LISTEN` when it cannot be (the address is in use, say).
    package func start() throws(ConfigurationError) {
        // The page's connections may never take the descriptors the alerting needs.
        let limit = DescriptorBudget.raise()
        let cap = configuration.ack?.maxConnections ?? 256
        if let problem = DescriptorBudget.problem(maxConnections: cap, limit: limit,
                                                  reserve: DescriptorBudget.reserve(for: configuration)) {
            done.signal()
            throw ConfigurationError(setting: "ACK_MAX_CONNECTIONS", reason: problem)
        }
        let bound = Locked<Result<Int, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let responder = AckResponder(configuration: configuration, logger: logger)
        let connections = self.connections
        var http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionRules(after: Self.connectionLifetime, registry: connections)],
            idleTimeout: Self.idleTimeout)
        http.httpDecoder = .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 64)
        var quiet = logger
        quiet.logLevel = .warning  // Hummingbird's own start and stop lines
        let app = Application(
            responder: responder, server: .http1(configuration: http),
            configuration: ApplicationConfiguration(address: .hostname(listen.host, port: listen.port), serverName: nil,
                                                  availableConnectionsDelegate: ConnectionCap(cap: cap, logger: logger)),
            onServerRunning: { channel in
                bound.withLock { $0 = .success(channel.localAddress?.port ?? 0) }
                ready.signal()
            }, logger: quiet)
        // In a service group of its own with no signal of its own: the daemon's stop signal triggers
        // its graceful shutdown (cancelling the task instead crashed NIO when a connection arrived
        // during the stop: "Deinited NIOAsyncWriter without calling finish()").
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: quiet))
        let task = Task {
            do {
                try await group.run()
            } catch {
                bound.withLock { if $0 == nil { $0 = .failure(error) } }
                ready.signal()
            }
        }
        running.withLock { $0 = task }
        ready.wait()
        if case .failure(let error) = bound.withLock({ $0 }) {
            done.signal()
            throw ConfigurationError(setting: "ACK_LISTEN", reason: "cannot listen on \(listen): \(error)")
        }
        logger.notice("acknowledgement page listening on \(listen): at most \(cap) connections of \(limit.soft) descriptors")
        // The stop signal ends it: a graceful shutdown, then the task is abandoned after the grace.
        let watcher = Thread { [self] in
            while stop.sleep(3600) {}
            // The server stops accepting and quiesces; the open requests end now (their clients see
            // the connection close) rather than when their clients please.
            let finished = DispatchSemaphore(value: 0)
            Task {
                await group.triggerGracefulShutdown()
                connections.closeAll()
                _ = await task.result
                finished.signal()
            }
            if finished.wait(timeout: .now() + Self.stopGrace) == .timedOut {
                logger.notice("acknowledgement page: a request was still open at the stop; abandoned")
            }
            done.signal()
        }
        watcher.name = "sileme-ack-stop"
        watcher.start()
    }

    /// Waits (after the stop signal) until the listener has stopped or was abandoned: at most
    /// about `stopGrace` after the stop.
    package func join() { done.wait() }
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
