import Config

extension HealthCheck.Part {
    /// `acknowledgement page` (docs/acknowledgement.md): the links, and the page's listener — a
    /// daemon that is not running is a warning, not a failure — with the acknowledgements counted.
    static let ackPage = Self(when: { $0.ack != nil }, lines: { context in
        guard let ack = context.configuration.ack else { return [] }
        let links = ack.baseURL.map { "links to \($0)/…" } ?? "no links in mails (ACK_BASE_URL unset)"
        let counted = context.acknowledgements.map { "; " + $0 } ?? ""
        guard let listen = ack.listen else {
            return [Finding(subject: "acknowledgement page", ok: true, detail: "\(links); not served here (ACK_LISTEN unset)\(counted)")]
        }
        let problem = AckPageProbe.problem(host: listen.host, port: listen.port)
        return [Finding(subject: "acknowledgement page", ok: true, warning: problem != nil,
                        detail: "\(links); ACK_LISTEN \(listen) (at most \(ack.maxConnections) connections): \(problem ?? "answers")\(counted)")]
    })
}
