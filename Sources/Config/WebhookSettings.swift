import Foundation
import Mustache
import Values

/// The webhook channel: where events are POSTed, the key that signs them, which event types go
/// out, and how the body is made. `NotifierConfiguration.webhook` holds one only when
/// `WEBHOOK_URL` is set.
package struct WebhookSettings: Sendable {
    /// `WEBHOOK_URL`: the `http://` or `https://` endpoint. Kept as a secret because its userinfo
    /// or query may hold the receiver's own key (a chat bot's `?key=…`): show `displayURL`.
    package var url: Secret
    /// The signing key, from `WEBHOOK_SECRET`, `WEBHOOK_SECRET_FILE` or the `webhook-secret`
    /// credential.
    package var signingKey: SigningKey
    /// `WEBHOOK_CA_FILE`: a PEM bundle to verify the endpoint with instead of the system store.
    package var caFile: String?
    /// `WEBHOOK_TIMEOUT_SECONDS`: the bound on connecting and on the whole request (default 10).
    package var timeoutSeconds: Int = 10
    /// `WEBHOOK_EVENTS`: the event types that are sent (default: all of them). `ping` is not
    /// among them and always goes out (see `sends(_:)`).
    package var events: Set<WebhookEventType> = Set(WebhookEventType.selectable)
    /// `WEBHOOK_BODY_TEMPLATE`: a Mustache file whose rendering replaces the JSON body; nil sends
    /// the event's own JSON.
    package var bodyTemplate: BodyTemplate?

    /// Settings for `url` signed with `signingKey`, every other value its documented default.
    package init(url: Secret, signingKey: SigningKey) {
        self.url = url
        self.signingKey = signingKey
    }

    /// Whether events of `type` are sent: those `WEBHOOK_EVENTS` lists, and `ping` always.
    package func sends(_ type: WebhookEventType) -> Bool { type == .ping || events.contains(type) }

    /// `url` as logs and reports may show it: scheme, host, port and path, without the userinfo,
    /// the query and the fragment.
    package var displayURL: String { Self.displayURL(url.value) }

    /// `url` without its userinfo, query and fragment (`<invalid URL>` when it does not parse).
    package static func displayURL(_ url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, let host = parts.host else { return "<invalid URL>" }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(hostPart)" + (parts.port.map { ":\($0)" } ?? "") + parts.percentEncodedPath
    }
}

extension WebhookSettings {
    /// The HMAC key of the Standard Webhooks signature: the base64-decoded part of a
    /// `whsec_<base64>` secret, or of a bare base64 secret. Never prints itself.
    package struct SigningKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The key's bytes: read them only where they are handed to HMAC.
        package let bytes: [UInt8]

        /// The fewest bytes accepted (192 bits, the Standard Webhooks recommendation's minimum).
        package static let minimumBytes = 24
        /// The most bytes accepted (a file of another kind given by mistake is refused).
        package static let maximumBytes = 512

        /// Decodes `secret` (white space around it ignored). The error never holds the secret.
        package init(secret: Secret) throws(Problem) {
            var text = Substring(secret.value.trimmingCharacters(in: .whitespacesAndNewlines))
            if text.hasPrefix("whsec_") { text = text.dropFirst(6) }
            guard let bytes = Self.base64(text) else { throw .notBase64 }
            guard bytes.count >= Self.minimumBytes, bytes.count <= Self.maximumBytes else { throw .length(bytes.count) }
            self.bytes = bytes
        }

        /// Standard base64 (`A–Z a–z 0–9 + /`), padding optional; nil for anything else.
        private static func base64(_ text: Substring) -> [UInt8]? {
            var body = text
            var padding = 0
            while body.last == "=" && padding < 2 {
                body.removeLast()
                padding += 1
            }
            let alphabet = body.utf8.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2F
            }
            guard !body.isEmpty, alphabet, body.utf8.count % 4 != 1, padding == 0 || (body.utf8.count + padding) % 4 == 0 else { return nil }
            let padded = String(body) + String(repeating: "=", count: (4 - body.utf8.count % 4) % 4)
            return Data(base64Encoded: padded).map { Array($0) }
        }

        package var description: String { "<redacted>" }
        package var debugDescription: String { "<redacted>" }

        /// What is wrong with a secret, in words that never quote it.
        package enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
            /// Neither `whsec_` followed by base64 nor bare base64.
            case notBase64
            /// It decodes to this many bytes, outside `minimumBytes...maximumBytes`.
            case length(Int)

            package var description: String {
                switch self {
                case .notBase64:
                    "must be whsec_ followed by base64, or base64 alone (the value is not shown)"
                case .length(let count):
                    "decodes to \(count) bytes; a key of \(SigningKey.minimumBytes) to \(SigningKey.maximumBytes) bytes is needed, "
                        + "e.g. whsec_ followed by the output of `openssl rand -base64 32` (the value is not shown)"
                }
            }
        }
    }

    /// The parsed `WEBHOOK_BODY_TEMPLATE` file. Parsed when the configuration is loaded, so a
    /// broken template stops the program at start (exit 78) instead of failing every event. Its
    /// errors say where, never quote the template (which may hold a gateway's API key).
    package struct BodyTemplate: Sendable {
        /// The file it was read from.
        package let path: String
        /// The template, compiled without Mustache's HTML escaping (the webhook escapes every
        /// value for JSON before rendering).
        package let template: MustacheTemplate

        /// Reads and parses the file at `path`.
        package init(path: String) throws(ConfigurationError) {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                  let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(setting: "WEBHOOK_BODY_TEMPLATE", reason: "cannot read \(path)")
            }
            guard let source = String(data: data, encoding: .utf8) else {
                throw ConfigurationError(setting: "WEBHOOK_BODY_TEMPLATE", reason: "\(path) is not UTF-8 text")
            }
            try self.init(source: source, path: path)
        }

        /// Parses `source`, which was read from `path`.
        package init(source: String, path: String) throws(ConfigurationError) {
            guard source.contains(where: { !$0.isWhitespace }) else {
                throw ConfigurationError(setting: "WEBHOOK_BODY_TEMPLATE", reason: "\(path) is empty")
            }
            let pragma = "{{% CONTENT_TYPE: TEXT}}"
            do {
                template = try MustacheTemplate(string: pragma + source)
            } catch let error as MustacheTemplate.ParserError {
                // Where and what, never the line itself: a gateway's template may hold its API key.
                let column = error.context.columnNumber - (error.context.lineNumber == 1 ? pragma.count : 0)
                throw ConfigurationError(setting: "WEBHOOK_BODY_TEMPLATE", reason: "\(path) is not a valid Mustache template: "
                                         + "\(error.error) at line \(error.context.lineNumber), column \(column)")
            } catch {
                throw ConfigurationError(setting: "WEBHOOK_BODY_TEMPLATE", reason: "\(path) is not a valid Mustache template: \(type(of: error))")
            }
            self.path = path
        }
    }
}
