import Bounce
import Testing

/// The rules of `BounceVerdict`, each stated without a message.
@Suite("Bounce verdicts")
struct BounceVerdictTests {
    typealias Block = BounceReport.Recipient

    @Test("failed + 5.x.x is permanent; failed + 4.x.x and delayed are transient; success changes nothing; the rest is unparsed")
    func recipientRules() {
        #expect(BounceVerdict.recipient(Block(action: "failed", status: "5.1.1")) == .permanent)
        #expect(BounceVerdict.recipient(Block(action: "failed", status: "4.4.1")) == .transient)
        #expect(BounceVerdict.recipient(Block(action: "delayed", status: "4.3.0")) == .transient)
        #expect(BounceVerdict.recipient(Block(action: "delayed")) == .transient)
        for action in ["delivered", "relayed", "expanded"] { #expect(BounceVerdict.recipient(Block(action: action, status: "2.0.0")) == .delivered) }
        #expect(BounceVerdict.recipient(Block(action: "failed")) == .unparsed)
        #expect(BounceVerdict.recipient(Block(status: "5.1.1")) == .unparsed)
        #expect(BounceVerdict.recipient(Block(action: "deliverable", status: "2.1.5")) == .unparsed)
    }

    @Test("a report is as bad as its worst recipient")
    func reportRules() {
        #expect(BounceVerdict.report([Block(action: "delayed"), Block(action: "failed", status: "5.2.2")]) == .permanent)
        #expect(BounceVerdict.report([Block(action: "delivered", status: "2.0.0"), Block(action: "delayed")]) == .transient)
        #expect(BounceVerdict.report([]) == .unparsed)
    }

    @Test("auto-replies: RFC 3834 and the vendors' markers, but never a bounce from a mail system")
    func autoReplies() {
        func fields(_ pairs: [(String, String)]) -> MIMEFields { MIMEFields(all: pairs.map { .init(name: $0.0, value: $0.1) }) }
        #expect(BounceVerdict.isAutoReply(fields([("Auto-Submitted", "auto-replied (vacation)")])))
        #expect(BounceVerdict.isAutoReply(fields([("Subject", "Automatic reply: 王小明已经 3 天没有签到")])))
        #expect(BounceVerdict.isAutoReply(fields([("Subject", "自动回复: 提醒")])))
        #expect(BounceVerdict.isAutoReply(fields([("X-Autoreply", "yes")])))
        #expect(!BounceVerdict.isAutoReply(fields([("Auto-Submitted", "auto-generated")])))
        #expect(!BounceVerdict.isAutoReply(fields([("Auto-Submitted", "auto-replied"), ("X-Failed-Recipients", "a@b.example")])))
        #expect(!BounceVerdict.isAutoReply(fields([("Auto-Submitted", "auto-replied"), ("From", "Mail Delivery System <MAILER-DAEMON@x.example>")])))
        #expect(!BounceVerdict.isAutoReply(fields([("Subject", "Re: hello")])))
    }
}
