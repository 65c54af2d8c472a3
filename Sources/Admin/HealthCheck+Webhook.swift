import Foundation
import Webhook

extension HealthCheck.Part {
    /// `webhook` (docs/webhooks.md): a signed `ping` event, in the body template's format when
    /// there is one — the endpoint, its TLS and, if the receiver checks it, the secret (exit 69
    /// when it does not take it).
    static let webhook = Self(when: { $0.webhook != nil }, lines: { context in
        guard let webhook = context.configuration.webhook else { return [] }
        let ping = "ping_" + String(UInt64.random(in: .min ... .max), radix: 16)
        do {
            let template = try webhook.bodyTemplate.map { try WebhookBodyTemplate($0, appName: context.configuration.appName) }
            let outcome = try WebhookTransport(settings: webhook).send(try WebhookEvent.ping(id: ping, timestamp: Date()), using: template)
            let ok = if case .delivered = outcome { true } else { false }
            return [Finding(subject: "webhook", ok: ok, detail: "\(webhook.displayURL): signed ping \(ping): \(outcome.reason)", failure: .unavailable)]
        } catch {
            return [Finding(subject: "webhook", ok: false, detail: "\(webhook.displayURL): \(error)")]
        }
    })
}
