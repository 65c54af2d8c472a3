import Bounce
import Config
import Foundation
import Mail
import Rule
import Values
import Webhook

/// The channels a run sends through, as a maker of each send worker's own set (a channel owns its
/// connection, one thread's). What all workers share — the rate limit, the webhook's body
/// template — is made once per run, in `standard`.
package struct DeliveryChannels: Sendable {
    /// Makes one worker's channels, hearing `control`'s stop signal and feeding its watchdog.
    package let make: @Sendable (RunControl) throws -> [any DeliveryChannel]

    /// Channels made by `make`.
    package init(make: @escaping @Sendable (RunControl) throws -> [any DeliveryChannel]) {
        self.make = make
    }

    /// The notifier's channels for a run on `runDate`: mail through `makeTransport` (one transport
    /// per worker, made when the worker starts) at `SMTP_RATE_LIMIT`'s pace, and webhook events
    /// to `WEBHOOK_URL`. A new channel is its file, its settings and one line here.
    package static func standard(configuration: NotifierConfiguration, composer: MailComposer, runDate: CalendarDate,
                                 makeTransport: @escaping @Sendable () throws -> any MailTransport) -> DeliveryChannels {
        let limiter = configuration.smtp.rateLimit.map { RateLimiter(perSecond: $0) }
        // Checked at start (exit 78): it renders here as it did then.
        let template = configuration.webhook?.bodyTemplate.flatMap { try? WebhookBodyTemplate($0, appName: configuration.appName) }
        let bounceTag = configuration.bounce.map(BounceTag.init(settings:))
        return DeliveryChannels { control in
            [
                MailChannel(composer: composer, transport: try makeTransport(), limiter: limiter, runDate: runDate, control: control,
                            bounceTag: bounceTag),
                WebhookChannel(configuration: configuration, template: template, composer: composer, runDate: runDate, control: control),
            ]
        }
    }

    /// One worker's channels; throws when a kind of job has none (a programming error, failing
    /// the worker rather than losing its jobs).
    func forWorker(_ control: RunControl) throws -> Worker {
        let channels = Dictionary(try make(control).map { ($0.channel, $0) }) { first, _ in first }
        if let missing = DeliveryJob.Channel.allCases.first(where: { channels[$0] == nil }) { throw Missing(channel: missing) }
        return Worker(byChannel: channels)
    }

    /// One send worker's channels, one for each kind of job.
    struct Worker {
        /// Every `DeliveryJob.Channel`'s (`forWorker` checked).
        fileprivate let byChannel: [DeliveryJob.Channel: any DeliveryChannel]

        /// The channel that sends `channel`'s jobs.
        subscript(_ channel: DeliveryJob.Channel) -> any DeliveryChannel { byChannel[channel]! }
    }

    /// No channel sends a kind of job.
    struct Missing: Error, CustomStringConvertible {
        /// The kind of job.
        let channel: DeliveryJob.Channel
        var description: String { "no delivery channel sends \(channel.rawValue) messages" }
    }
}
