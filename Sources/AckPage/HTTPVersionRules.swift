import NIOCore
import NIOHTTP1

/// What HTTP/1.x asks of a server that Hummingbird's version-less request types cannot see
/// (RFC 9112): an HTTP/1.0 request is answered as HTTP/1.0 with `Connection: close`, and the
/// connection is closed after it (as after any answer that says `Connection: close`); an
/// HTTP/1.1 request without `Host` gets 400 and the connection is closed. Sits right after NIO's request decoder (`ConnectionGate` puts it there).
final class HTTPVersionRules: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The versions of the requests read and not yet answered, oldest first (requests may be
    /// pipelined; answers go out in order).
    private var versions: [HTTPVersion] = []
    /// A request was refused: the rest of what the client sends is dropped.
    private var refused = false
    /// The answer being written says `Connection: close`: the connection is closed after it.
    private var closing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data) {
            if head.version.isAtLeast11 && !head.headers.contains(name: "host") {
                refused = true
                var headers = HTTPHeaders([("Content-Length", "0"), ("Connection", "close")])
                headers.add(name: "Cache-Control", value: "no-store")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
                return
            }
            versions.append(head.version)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            if let version = versions.first, !version.isAtLeast11 {
                head.version = version
                head.headers.replaceOrAdd(name: "Connection", value: "close")
            }
            closing = head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            if !versions.isEmpty { versions.removeFirst() }
            guard closing else {
                context.write(data, promise: promise)
                return
            }
            // The answer said `Connection: close` (an HTTP/1.0 request, a body refused unread):
            // the connection ends with it rather than when the client or a timer pleases.
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in context.close(promise: nil) }
            context.writeAndFlush(data, promise: written)
        }
    }
}

extension HTTPVersion {
    /// HTTP/1.1 or later (which needs `Host` and keeps the connection by default).
    fileprivate var isAtLeast11: Bool { (major, minor) >= (1, 1) }
}
