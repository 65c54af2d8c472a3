import Foundation

extension Mailbox {
    /// This test's tag: the first label of `domain` (`t` and 12 random hex digits). Put it in the
    /// local part of addresses outside `domain` (IDN domains) to find their mails again.
    var tag: String { String(domain.prefix { $0 != "." }) }

    /// Every message accepted for a recipient that contains `tag` (in `domain` or in any other
    /// domain), in arrival order, with that recipient (lowercased).
    func taggedDeliveries() throws -> [Delivery] {
        Self.deliveries(maildir: try TestEnvironment.require().maildir, mentioning: tag) { $0.contains(tag) }
    }
}
