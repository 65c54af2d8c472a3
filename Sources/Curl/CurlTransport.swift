import CCurl
import Foundation
import Values

/// A transport that sends over one `CurlHandle` (SMTP, the webhook's POST): what every such
/// transport offers its caller about waiting — hearing the stop signal, calling `onWait` while the
/// server is slow, the grace time after a stop — written once here instead of in each transport.
package protocol CurlTransport: AnyObject {
    /// The handle the transport sets its protocol's options on and performs with.
    var curl: CurlHandle { get }
}

extension CurlTransport {
    /// Called from inside a transfer about once a second while libcurl waits for the server
    /// (the daemon pings systemd's watchdog from it, so a slow server is not mistaken for a hang).
    package var onWait: (@Sendable () -> Void)? {
        get { curl.onWait }
        set { curl.onWait = newValue }
    }

    /// The process's stop signal: once raised, a transfer still waiting for the server after
    /// `stopGrace` seconds is given up (what that means for the message is the transport's to say).
    package var stop: StopSignal? {
        get { curl.stop }
        set { curl.stop = newValue }
    }

    /// How long a transfer in flight may go on after a stop (`CurlHandle.stopGrace`).
    package static var stopGrace: TimeInterval { CurlHandle.stopGrace }

    /// Hears `stop` and calls `onWait` while a transfer waits: a run's sender wires both at once.
    package func hear(_ stop: StopSignal, onWait: @escaping @Sendable () -> Void) {
        self.stop = stop
        self.onWait = onWait
    }
}

extension CurlHandle {
    /// Verifies the server's certificate and name (against `caFile` when set, else the system's
    /// store), and gives up a connect that takes longer than `connectTimeout` seconds: both
    /// transports' TLS and connect settings.
    package func verifyPeer(caFile: String?, connectTimeout: Int) {
        set(CURLOPT_CONNECTTIMEOUT, connectTimeout)
        set(CURLOPT_SSL_VERIFYPEER, 1)
        set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile { set(CURLOPT_CAINFO, caFile) }
    }
}
