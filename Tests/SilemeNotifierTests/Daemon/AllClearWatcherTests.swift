import Testing
@testable import Daemon

/// The users a pass after a `NOTIFY` is limited to: the payloads of the check-in trigger.
@Suite("AllClearWatcher.users")
struct AllClearWatcherTests {
    @Test("user ids from the trigger's payloads, normalised and de-duplicated")
    func ids() {
        let users = AllClearWatcher.users([
            "3f0e6a5c-1111-4222-8333-000000000001", "3F0E6A5C-1111-4222-8333-000000000001", "3f0e6a5c-1111-4222-8333-000000000002",
        ])
        #expect(users == ["3f0e6a5c-1111-4222-8333-000000000001", "3f0e6a5c-1111-4222-8333-000000000002"])
    }

    @Test("a payload that is not a user id (someone else's NOTIFY on the channel) asks for the whole sweep")
    func foreign() {
        #expect(AllClearWatcher.users(["3f0e6a5c-1111-4222-8333-000000000001", "hello"]) == nil)
        #expect(AllClearWatcher.users(["'); DROP TABLE users; --"]) == nil)
    }
}
