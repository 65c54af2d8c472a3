import Foundation
import Values

/// The SQL of the canary (docs/operating.md, "The canary"; migration 034, `sileme.canaries`): a
/// period claimed for a relay, a canary back or lost, and what `check`, the metrics and the history
/// report read. Every write is one statement that says whether it changed the row, so two daemons
/// never both send a period's canary, nor both report the same one lost.
package enum CanaryStore {
    /// Claims the period that starts at `period` for `relay`: the new canary's id, or nil when
    /// another daemon (or this one, before a restart) claimed it already. `sent_at` is now: the
    /// canary is sent right after.
    package static func claim(_ db: PGConnection, relay: String, period: Date) throws -> Int64? {
        try db.executePrepared(SQLStatement("""
            INSERT INTO sileme.canaries (relay, period_start) VALUES ($relay, to_timestamp($period::double precision))
            ON CONFLICT (relay, period_start) DO NOTHING RETURNING id::text
            """), ["relay": relay, "period": String(period.timeIntervalSince1970)]).rows.first?.string("id").flatMap { Int64($0) }
    }

    /// A canary neither back nor lost yet.
    package struct Open: Sendable, Equatable {
        package var id: Int64
        package var relay: String
        package var sentAt: Date

        /// Creates the value.
        package init(id: Int64, relay: String, sentAt: Date) {
            self.id = id
            self.relay = relay
            self.sentAt = sentAt
        }
    }

    /// The canaries neither back nor lost.
    package static func open(_ db: PGConnection) throws -> [Open] {
        try db.executePrepared(SQLStatement("""
            SELECT id::text AS id, relay, extract(epoch FROM sent_at)::text AS sent_at FROM sileme.canaries
            WHERE back_at IS NULL AND lost_at IS NULL ORDER BY id
            """), [:]).rows.compactMap(open)
    }

    /// A row of `id`, `relay` and `sent_at` (epoch seconds) as an open canary.
    private static func open(_ row: PGRow) -> Open? {
        guard let id = row.string("id").flatMap({ Int64($0) }), let relay = row.string("relay"),
              let sent = row.string("sent_at").flatMap({ Double($0) }) else { return nil }
        return Open(id: id, relay: relay, sentAt: Date(timeIntervalSince1970: sent))
    }

    /// Marks canary `id` lost for `reason` (`not_back`, `bounced 5.x.x`, `not_sent: …`): the canary as
    /// it was, or nil when it is back or lost already (another daemon, or the mailbox, was first).
    @discardableResult
    package static func markLost(_ db: PGConnection, id: Int64, reason: String) throws -> Open? {
        try db.executePrepared(SQLStatement("""
            UPDATE sileme.canaries SET lost_at = now(), lost_reason = $reason
            WHERE id = $id::bigint AND back_at IS NULL AND lost_at IS NULL
            RETURNING id::text AS id, relay, extract(epoch FROM sent_at)::text AS sent_at
            """), ["id": String(id), "reason": reason]).rows.first.flatMap(open)
    }

    /// Canary `id` came back: its relay and how long it took, or nil when it was back before (the
    /// mailbox read twice) or is no canary of this database. One lost before and back now keeps
    /// its `lost_at`: it was late, and `check` said so; its latency still counts.
    package static func back(_ db: PGConnection, id: Int64) throws -> (relay: String, latency: Double)? {
        try db.executePrepared(SQLStatement("""
            UPDATE sileme.canaries SET back_at = now() WHERE id = $id::bigint AND back_at IS NULL
            RETURNING relay, extract(epoch FROM back_at - sent_at)::text AS latency
            """), ["id": String(id)]).rows.first.flatMap { row in
            guard let relay = row.string("relay"), let latency = row.string("latency").flatMap({ Double($0) }) else { return nil }
            return (relay, latency)
        }
    }

    /// One relay's canaries, as `check`, the metrics and the history report show them.
    package struct Figures: Sendable, Equatable {
        package var relay: String
        /// Canaries sent, back (late ones too), and found lost (a late one stays counted: a counter
        /// never goes down).
        package var sent = 0
        package var back = 0
        package var lost = 0
        /// The latest canary's sending, and whether it is lost (with why).
        package var latestSentAt: Date?
        package var latestLost: String?
        /// The first canary's sending (what "none back yet" is counted from).
        package var firstSentAt: Date?
        /// The last canary back, and its latency.
        package var lastBackAt: Date?
        package var lastLatency: Double?
        /// The median and the longest latency of the canaries back.
        package var latencyMedian: Double?
        package var latencyMax: Double?

        /// Creates the value.
        package init(relay: String) { self.relay = relay }
    }

    /// Each relay's figures (a relay with no canary has no entry): of every canary, or of those
    /// sent on the days `from` to `to` (`YYYY-MM-DD`) in the zone `zone` (the history report's period).
    package static func figures(_ db: PGConnection, from: String? = nil, to: String? = nil, zone: String? = nil) throws -> [Figures] {
        try db.executePrepared(SQLStatement("""
            SELECT c.relay, count(*)::text AS sent, count(c.back_at)::text AS back,
                   count(c.lost_at)::text AS lost,
                   extract(epoch FROM max(c.sent_at))::text AS latest_sent, extract(epoch FROM min(c.sent_at))::text AS first_sent,
                   extract(epoch FROM max(c.back_at))::text AS last_back,
                   (SELECT CASE WHEN l.lost_at IS NOT NULL AND l.back_at IS NULL THEN coalesce(l.lost_reason, 'lost') END
                    FROM sileme.canaries l WHERE l.relay = c.relay ORDER BY l.sent_at DESC, l.id DESC LIMIT 1) AS latest_lost,
                   (SELECT extract(epoch FROM b.back_at - b.sent_at)::text FROM sileme.canaries b
                    WHERE b.relay = c.relay AND b.back_at IS NOT NULL ORDER BY b.back_at DESC LIMIT 1) AS last_latency,
                   (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM c.back_at - c.sent_at)))::text AS median,
                   max(extract(epoch FROM c.back_at - c.sent_at))::text AS longest
            FROM sileme.canaries c
            WHERE ($from::date IS NULL OR c.sent_at >= ($from::date::timestamp AT TIME ZONE $zone))
              AND ($to::date IS NULL OR c.sent_at < (($to::date + 1)::timestamp AT TIME ZONE $zone))
            GROUP BY c.relay ORDER BY c.relay
            """), ["from": from, "to": to, "zone": zone]).rows.compactMap { row in
            guard let relay = row.string("relay") else { return nil }
            func time(_ name: String) -> Date? { row.string(name).flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) } }
            var figures = Figures(relay: relay)
            figures.sent = row.int("sent") ?? 0
            figures.back = row.int("back") ?? 0
            figures.lost = row.int("lost") ?? 0
            figures.latestSentAt = time("latest_sent")
            figures.firstSentAt = time("first_sent")
            figures.lastBackAt = time("last_back")
            figures.latestLost = row.string("latest_lost")
            figures.lastLatency = row.string("last_latency").flatMap { Double($0) }
            figures.latencyMedian = row.string("median").flatMap { Double($0) }
            figures.latencyMax = row.string("longest").flatMap { Double($0) }
            return figures
        }
    }
}
