import CLibPQ
import Foundation

/// One libpq connection: parameterised statements, transactions and row-by-row streaming.
///
/// Blocking by design: every call waits for the server. Use one connection per thread; the run
/// gives each worker its own. Not `Sendable`: it must not be shared between threads.
public final class PGConnection {
    private let handle: OpaquePointer

    /// Connects with a libpq connection string or URI (`""` uses the `PG*` variables and defaults).
    public init(_ conninfo: Secret, applicationName: String = "sileme-notifier") throws(DatabaseError) {
        // Validate into a local first: a throwing class init still runs deinit once self is set.
        var keys: [String] = ["dbname", "application_name", "connect_timeout"]
        var values: [String] = [conninfo.value, applicationName, "10"]
        if conninfo.value.isEmpty { keys.removeFirst(); values.removeFirst() }
        let connection: OpaquePointer? = Self.withCStrings(keys) { k in
            Self.withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let connection else {
            throw DatabaseError(kind: .unreachable, sqlState: nil, message: "out of memory creating a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.redacted(Self.trimmed(PQerrorMessage(connection)), conninfo: conninfo)
            PQfinish(connection)
            throw DatabaseError(kind: .unreachable, sqlState: nil, message: message)
        }
        handle = connection
        _ = try execute("SET client_min_messages = warning")
    }

    deinit { PQfinish(handle) }

    /// What is wrong with the syntax of `conninfo` (a URI or `key=value` string), in libpq's words
    /// with the secrets taken out; nil when libpq can parse it.
    public static func syntaxProblem(_ conninfo: Secret) -> String? {
        guard !conninfo.value.isEmpty else { return nil }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo.value, &error) else {
            defer { PQfreemem(error) }
            return redacted(trimmed(error), conninfo: conninfo)
        }
        defer { PQconninfoFree(options) }
        // libpq checks a port's digits only when it connects ("invalid integer value"): check them here.
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "port", let raw = option.pointee.val {
                let ports = String(cString: raw).split(separator: ",", omittingEmptySubsequences: false)
                if ports.contains(where: { Int($0).map { !(1...65535).contains($0) } ?? !$0.isEmpty }) {
                    return "invalid port \"\(String(cString: raw))\""
                }
            }
            option += 1
        }
        return nil
    }

    /// libpq's `message` without the connection string or its password: parse errors quote them
    /// ("… in URI: \"postgresql://u:pw@[::1/db\""). Whatever it quotes that holds the password,
    /// the whole string, or a URI's user part is replaced by `<redacted>`.
    static func redacted(_ message: String, conninfo: Secret) -> String {
        let value = conninfo.value
        var passwords: [String] = []
        // The password of a URI (user:password@host), raw and percent-decoded, and of `password=`.
        if let scheme = value.range(of: "://"), let at = value[scheme.upperBound...].lastIndex(of: "@") {
            let userInfo = value[scheme.upperBound..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                let password = String(userInfo[userInfo.index(after: colon)...])
                passwords += [password, password.removingPercentEncoding ?? ""]
            }
        }
        if let range = value.range(of: "password=") {
            passwords.append(String(value[range.upperBound...].prefix { !$0.isWhitespace }).trimmingCharacters(in: CharacterSet(charactersIn: "'")))
        }
        passwords = passwords.filter { !$0.isEmpty }
        var text = message
        for secret in [value] + passwords.filter({ $0.count >= 4 }) where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        // Anything quoted that still looks like a URI, its user part, or a piece of the password.
        let parts = text.components(separatedBy: "\"")
        return parts.enumerated().map { index, part in
            let secret = part.contains("@") || part.contains("://")
                || passwords.contains { $0.contains(part) && part.count >= 3 || part.contains($0) }
            return index % 2 == 1 && secret ? "<redacted>" : part
        }.joined(separator: "\"")
    }

    /// The server process id of this session (`pg_backend_pid()`).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs one statement with text parameters (`$1`, `$2`, … ; nil is SQL NULL) and returns all rows.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(DatabaseError) -> PGResult {
        let result = withParameters(parameters) { count, values in
            PQexecParams(handle, sql, count, nil, values, nil, nil, 0)
        }
        return try check(result)
    }

    /// Runs a statement of several commands with no parameters (used for migrations).
    public func executeScript(_ sql: String) throws(DatabaseError) {
        _ = try check(PQexec(handle, sql))
    }

    /// Runs a query and hands each row to `body`, fetching `batch` rows at a time through a cursor,
    /// so that a large result is never held in memory whole (and without single-row mode's cost of
    /// one result object per row). Opens a transaction around the cursor when none is open.
    public func stream(_ sql: String, _ parameters: [String?] = [], batch: Int = 2000, row body: (PGRow) throws -> Void) throws {
        let cursor = "sileme_stream"
        let own = PQtransactionStatus(handle) == PQTRANS_IDLE
        if own { try execute("BEGIN") }
        do {
            try execute("DECLARE \(cursor) NO SCROLL CURSOR FOR " + sql, parameters)
            while true {
                let result = try execute("FETCH \(batch) FROM \(cursor)")
                for index in 0..<result.count { try body(result[index]) }
                if result.count < batch { break }
            }
            try execute("CLOSE \(cursor)")
            if own { try execute("COMMIT") }
        } catch {
            if own { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    public func transaction<T>(readOnly: Bool = false, _ body: () throws -> T) throws -> T {
        try execute(readOnly ? "BEGIN TRANSACTION READ ONLY" : "BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
    }

    private func check(_ result: OpaquePointer?) throws(DatabaseError) -> PGResult {
        guard let result else { throw connectionError() }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PGResult(result)
        default:
            let error = resultError(result)
            PQclear(result)
            throw error
        }
    }

    private func resultError(_ result: OpaquePointer) -> DatabaseError {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let message = Self.trimmed(PQresultErrorMessage(result))
        let lost = PQstatus(handle) != CONNECTION_OK || (state?.hasPrefix("08") ?? false) || state == "57P01"
        return DatabaseError(kind: lost ? .unreachable : .statement, sqlState: state, message: message)
    }

    private func connectionError() -> DatabaseError {
        DatabaseError(kind: PQstatus(handle) == CONNECTION_OK ? .statement : .unreachable,
                      sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)))
    }

    private func withParameters<R>(_ parameters: [String?], _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.map { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer { body(Int32(parameters.count), $0.baseAddress) }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        message.map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown error"
    }
}
