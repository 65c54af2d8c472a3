import ArgumentParser
import Foundation
import Output
import Reports
import Values

/// `sileme-notifier report`: what the notifier did over a period — per day, or for one user.
/// Reads only; the report goes to standard output, a one-line summary to standard error.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "History: per day the runs, mails sent, failed (with the server's reply), pending retries and skipped users; per user (--user) the streaks and every mail.",
        discussion: """
            Days are run dates in NOTIFY_TIME_ZONE. Per day: the runs (start, duration, mode, host, status, counts), mails sent, failed permanently with the server's reply, waiting for a retry (with the next attempt), stuck in sending, users skipped by reason, and rows written before the delivery-state migration. With --user: the user's streaks (from a check-in to the next: missed days, when it was notified and with which m) and every notification row (recipient as recorded, masked; Message-ID; attempts; errors).

            Formats: table (80 columns, ends with the totals), json (one object), csv (UTF-8 with BOM, one line per record, its kind in the first column), html (one self-contained page with SVG charts). Table and HTML list at most 50 failed/retry/stuck mails per day and say how many more there are; JSON and CSV list all.

            The report reads in one read-only transaction and streams its rows. Exit codes: 0 success; 64 invalid arguments or unknown user; 69 database unreachable; 78 configuration error or unmigrated schema.
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "The first day, YYYY-MM-DD (default: six days before --to).")
    var from: String?

    @Option(name: .long, help: "The last day, YYYY-MM-DD (default: today in NOTIFY_TIME_ZONE).")
    var to: String?

    @Option(name: .long, help: "One user's history (users.id): streaks and every mail.")
    var user: String?

    @Option(name: .long, help: "table, json, csv or html.")
    var format: HistoryFormat = .table

    @Flag(name: .long, help: "Show contact emails (and addresses in server replies) in full; masked by default.")
    var fullEmails = false

    @Option(name: .long, help: "Only the users whose days are counted in this zone (an IANA name; users with no zone or an unknown one are counted in NOTIFY_TIME_ZONE), and the runs that served them.")
    var zone: String?

    func validate() throws {
        // What can be checked before the configuration (and its time zone) is read.
        if let zone, TimeZone(identifier: zone) == nil { throw ValidationError("--zone must be an IANA zone name such as Europe/London (got \"\(zone)\")") }
        if zone != nil && user != nil { throw ValidationError("--zone and --user: give one") }
        if let from, CalendarDate(parsing: from) == nil { throw ValidationError(HistoryError.invalidDate(option: "--from", value: from).description) }
        if let to, CalendarDate(parsing: to) == nil { throw ValidationError(HistoryError.invalidDate(option: "--to", value: to).description) }
        if from != nil, let to {
            do { _ = try request(today: CalendarDate(parsing: to)!) } catch { throw ValidationError(error.description) }
        } else if let user {
            do { _ = try HistoryRequest(from: CalendarDate(dayNumber: 0), to: CalendarDate(dayNumber: 0), userID: user) } catch {
                throw ValidationError(error.description)
            }
        }
    }

    func run() throws {
        let configuration = try common.loadConfiguration()
        let request: HistoryRequest
        do { request = try self.request(today: CalendarDate(Date(), in: configuration.timeZone)) } catch {
            throw ValidationError(error.description)
        }
        // RETENTION_DAYS: rows before the cutoff are deleted after each daily run; say so rather
        // than let an empty past look like quiet days.
        let today = CalendarDate(Date(), in: configuration.timeZone)
        if configuration.retentionDays > 0, request.from < today.adding(days: -configuration.retentionDays) {
            Console.error("note: RETENTION_DAYS=\(configuration.retentionDays): notifications and runs dated before "
                          + "\(today.adding(days: -configuration.retentionDays)) are deleted; the days before it show only what is left")
        }
        try Console.exitOnFailure {
            let writer = format.writer(output: TextOutput())
            do {
                let overview = try HistoryReport(configuration: configuration, request: request).write(into: writer)
                let totals = overview.totals
                let subject = request.userID.map { "user \($0), " } ?? request.zone.map { "users counted in \($0.identifier), " } ?? ""
                Console.error("report \(subject)\(request.from) to \(request.to): \(totals.sent) sent, \(totals.failed) failed, "
                              + "\(totals.retryPending) retry pending, \(totals.sending) sending, \(totals.skipped) skipped"
                              + (request.userID == nil ? ", \(totals.runs) runs, \(overview.daysWithoutRun) days without a run" : ""))
                return .success
            } catch let error as HistoryError {
                Console.error("sileme-notifier: \(error)")
                return error.exitStatus
            }
        }
    }

    private func request(today: CalendarDate) throws(HistoryError) -> HistoryRequest {
        var request = try HistoryRequest.parse(from: from, to: to, user: user, fullEmails: fullEmails,
                                               problemLimitPerDay: format.problemLimitPerDay, today: today)
        request.zone = zone.flatMap(TimeZone.init(identifier:))
        return request
    }
}

extension HistoryFormat: ExpressibleByArgument {}
