import Foundation
import Rule
import Testing
import Values
@testable import Store

@Suite("The channels as SQL sees them: one list, never a name in a statement")
struct ChannelSQLTests {
    @Test("a statement naming a channel set gets it from the one list; a caller's own value wins; each channel in one audience")
    func standingParameters() {
        let statement = SQLStatement("""
            SELECT 1 WHERE a = ANY($contact_channels::text[]) AND b = ANY($app_channels::text[])
              AND c = ANY($bounce_channels::text[]) AND d = ANY($channels::text[])
            """)
        #expect(statement.parameters(["channels": ChannelSQL.literal([.webhook])])
                == [ChannelSQL.literal(DeliveryJob.Channel.of(.contacts)), ChannelSQL.literal(DeliveryJob.Channel.of(.app)),
                    ChannelSQL.literal(DeliveryJob.Channel.allCases.filter(\.bounces)), "{\"webhook\"}"])
        #expect(statement.parameters(["channels": "{}", "contact_channels": "{\"x\"}"])[0] == "{\"x\"}")
        #expect(Set(DeliveryJob.Channel.of(.contacts)).isDisjoint(with: DeliveryJob.Channel.of(.app)))
        #expect(DeliveryJob.Channel.of(.contacts).count + DeliveryJob.Channel.of(.app).count == DeliveryJob.Channel.allCases.count)
    }

    @Test("what each channel declares: the kinds it carries, how its rows name the recipient, how reports label its kinds")
    func declarations() throws {
        let address = try EmailAddress(validating: "Grace@Example.com")
        for channel in DeliveryJob.Channel.allCases {
            // A contact's channel never carries what is for the app alone; the app's carries every kind.
            for kind in DeliveryJob.Kind.allCases {
                #expect(channel.carries(kind) == (channel.audience == .app || !kind.forAppOnly), "\(channel) \(kind)")
            }
            #expect(channel.recipientMasked(address) == (channel.audience == .contacts ? address.masked : channel.rawValue))
            #expect(channel.label("alert") == (channel == .primary ? "alert" : "alert (\(channel.rawValue))"))
        }
        #expect(DeliveryJob.Channel.primary.audience == .contacts, "the primary channel reaches contacts")
    }

    /// The source files that may name a channel: the list itself, and each channel's own sender.
    static let channelFiles: Set<String> = [
        "Rule/DeliveryJob+Channel.swift", "Delivery/Channels/MailChannel.swift", "Delivery/Channels/WebhookChannel.swift",
    ]

    @Test("no SQL in the sources spells a channel, and no code outside a channel's files compares with one")
    func noChannelSpelledOut() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !Self.channelFiles.contains($0) }
        #expect(files.count > 100, "the sources were found: \(sources.path)")
        let names = DeliveryJob.Channel.allCases.map(\.rawValue)
        let spelled = names.flatMap { ["'\($0)'", "== .\($0)", "!= .\($0)", "== \"\($0)\"", "!= \"\($0)\""] }
        var found: [String] = []
        for file in files {
            let text = try String(contentsOfFile: sources.appendingPathComponent(file).path, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where spelled.contains(where: { line.contains($0) }) {
                found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "a channel spelled out:\n\(found.joined(separator: "\n"))")
    }
}
