import Testing
@testable import Config

/// The sessions of `DATABASE_URL` held at most, as docs/operating.md counts them.
@Suite("DatabaseSessions")
struct DatabaseSessionsTests {
    @Test("a run: run lock + run + recorder + SMTP_CONNECTIONS senders", arguments: [1, 4, 64])
    func run(_ senders: Int) {
        #expect(DatabaseSessions(senders: senders, ackPage: false, separateListenURL: true).run == senders + 3)
    }

    @Test("the daemon: a run's, the fold's, an all-clear pass's (session, recorder, senders), the page's, the LISTEN session on a direct URL")
    func daemon() {
        let plain = DatabaseSessions(senders: 4, ackPage: false, separateListenURL: true)
        #expect(plain.daemon == 14)
        #expect(plain.daemonDirect == 14)
        let page = DatabaseSessions(senders: 4, ackPage: true, separateListenURL: false)
        #expect(page.daemon == 15)
        #expect(page.daemonDirect == 16)
        #expect(DatabaseSessions.minimumForRun == DatabaseSessions(senders: 1, ackPage: false, separateListenURL: true).run)
    }

    @Test("the bounce reader (BOUNCE_MAILBOX) holds one more session of the daemon's, none of a run's")
    func bounceReader() {
        let reader = DatabaseSessions(senders: 4, ackPage: true, separateListenURL: false, bounceReader: true)
        #expect(reader.run == 7)
        #expect(reader.daemon == 16)
        #expect(reader.daemonDirect == 17)
    }

    @Test("the canary (CANARY_EVERY) holds one more session of the daemon's, none of a run's")
    func canary() {
        let both = DatabaseSessions(senders: 4, ackPage: true, separateListenURL: false, bounceReader: true, canary: true)
        #expect(both.run == 7)
        #expect(both.daemon == 17)
        #expect(both.daemonDirect == 18)
    }

    @Test("the defaults, as check says them")
    func defaults() {
        let sessions = DatabaseSessions(NotifierConfiguration())
        #expect(sessions.run == 7)
        #expect(sessions.description.hasPrefix("a run 7 (run lock, run, recorder, 4 senders: SMTP_CONNECTIONS), the daemon 14"))
    }
}
