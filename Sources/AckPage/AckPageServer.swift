import Acknowledgement
import Config
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
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
/// - More than `ACK_RATE_LIMIT` requests a minute from one address: 429. A body over 4 KiB: 413.
///   A connection is closed when idle for 5 s and after 20 s in all (slow requests are cut off).
///
/// It hears the daemon's one stop signal: on a stop it shuts down gracefully (no new connection)
/// and closes the connections still open — a client that never finishes its request does not hold
/// the daemon; should anything still run a second later it is abandoned. The daemon stops within
/// 2 s whatever a client does.
public final class AckPageServer: @unchecked Sendable {
    private let configuration: NotifierConfiguration
    private let listen: AckSettings.Listen
    private let logger: Logger
    private let stop: StopSignal
    private let done = DispatchSemaphore(value: 0)
    private let running = Locked<Task<Void, Never>?>(nil)
    /// Every open client connection, so that a stop can close them (a graceful shutdown alone
    /// waits for each request to end, and a client may never end its own).
    private let connections = OpenConnections()

    /// How long a stop waits for open requests before the listener is abandoned.
    static let stopGrace: TimeInterval = 1
    /// The largest request body (the form has one short field).
    static let maximumBody = 4096
    /// A connection with nothing to read for this long is closed.
    static let idleTimeout = TimeAmount.seconds(5)
    /// A connection is closed this long after it opened, whatever it is doing.
    static let connectionLifetime = TimeAmount.seconds(20)

    /// A server for `configuration`'s `ACK_LISTEN` (nil when it has none).
    public init?(configuration: NotifierConfiguration, logger: Logger, stop: StopSignal) {
        guard let listen = configuration.ack?.listen else { return nil }
        self.configuration = configuration
        self.listen = listen
        self.logger = logger
        self.stop = stop
    }

    /// Starts listening; returns once the socket is bound. Throws a `ConfigurationError` naming
    /// `ACK_LISTEN` when it cannot be (the address is in use, say).
    public func start() throws(ConfigurationError) {
        let bound = Locked<Result<Int, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let responder = AckResponder(configuration: configuration, logger: logger)
        let connections = self.connections
        var http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionDeadline(after: Self.connectionLifetime, registry: connections)],
            idleTimeout: Self.idleTimeout)
        http.httpDecoder = .init(maxHeaderFieldSize: 8 * 1024, maxHeaderListSize: 16 * 1024, maxHeaderFieldCount: 64)
        var quiet = logger
        quiet.logLevel = .warning  // Hummingbird's own start and stop lines
        let app = Application(
            responder: responder, server: .http1(configuration: http),
            configuration: ApplicationConfiguration(address: .hostname(listen.host, port: listen.port), serverName: nil),
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
        logger.notice("acknowledgement page listening on \(listen)")
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
    public func join() { done.wait() }
}

/// Closes a connection a fixed time after it opened: a client that trickles its request (or
/// keeps a connection for ever) is cut off, whatever the idle timer sees. Registers the
/// connection while it is open, for a stop to close it.
final class ConnectionDeadline: ChannelInboundHandler, RemovableChannelHandler, Sendable {
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
    }
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
