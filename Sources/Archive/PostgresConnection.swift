import Agent
import CLibPQ
import Foundation

/// What PostgreSQL said when a statement or the connection failed.
struct PostgresError: Error, CustomStringConvertible {
    let message: String
    /// Worth waiting out: the connection is gone (server stopped, network), or the server cannot
    /// take the write now (disk full, shutting down, read-only, a conflict). Reconnect and retry.
    let connectionLost: Bool
    /// The server's SQLSTATE, when it sent one.
    var sqlState = ""
    var description: String { message }

    /// SQLSTATE classes that say "not now" rather than "not this": connection exception (08),
    /// transaction rollback (40), insufficient resources (53: disk full, out of memory),
    /// operator intervention (57: shutdown), system error (58), and 25006 read-only transaction.
    static func isTransient(sqlState: String) -> Bool {
        ["08", "40", "53", "57", "58"].contains(String(sqlState.prefix(2))) || sqlState == "25006"
    }
}

/// One libpq connection, used from one thread at a time: not `Sendable`; `ArchiveWriter` keeps
/// its own in a `Mutex`, the status loop its own in a local.
///
/// Statements are sent with `PQexecParams`: values travel as text parameters, never spliced
/// into SQL, so a device's payload cannot change a statement.
final class PostgresConnection {
    private var connection: OpaquePointer?

    /// Connects (blocking, libpq's `connect_timeout` from `conninfo` or 10 s).
    init(conninfo: String) throws {
        if let problem = keepalive_libpq_problem() {
            throw PostgresError(
                message: "libpq could not be loaded (install libpq5 for keepalive archive): \(String(cString: problem))",
                connectionLost: false)
        }
        let withTimeout = conninfo.contains("connect_timeout") ? conninfo : "\(conninfo) connect_timeout=10"
        guard let opened = PQconnectdb(withTimeout) else {
            throw PostgresError(message: "libpq could not allocate a connection", connectionLost: true)
        }
        connection = opened
        guard PQstatus(opened) == CONNECTION_OK else {
            let message = Self.text(PQerrorMessage(opened))
            PQfinish(opened)
            connection = nil
            throw PostgresError(message: message, connectionLost: true)
        }
    }

    deinit { if let connection { PQfinish(connection) } }

    /// Whether libpq still thinks the connection is usable.
    var isOK: Bool { connection.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Runs `sql` with text parameters (`$1`…; nil is NULL); returns the rows (text, nil for
    /// NULL) and the number of rows the command affected.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = []) throws -> (rows: [[String?]], affected: Int) {
        guard let connection else { throw PostgresError(message: "not connected", connectionLost: true) }
        // The C strings live until PQexecParams returns.
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        var values = copies.map { UnsafePointer<CChar>($0) }
        guard let result = PQexecParams(connection, sql, Int32(parameters.count), nil, &values, nil, nil, 0) else {
            throw PostgresError(message: Self.text(PQerrorMessage(connection)), connectionLost: PQstatus(connection) != CONNECTION_OK)
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
            throw PostgresError(
                message: Self.text(PQresultErrorMessage(result)),
                connectionLost: PQstatus(connection) != CONNECTION_OK || PostgresError.isTransient(sqlState: sqlState), sqlState: sqlState)
        }
        var rows: [[String?]] = []
        for row in 0..<PQntuples(result) {
            rows.append((0..<PQnfields(result)).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            })
        }
        return (rows, Int(Self.text(PQcmdTuples(result))) ?? 0)
    }

    private static func text(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        pointer.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "unknown error"
    }
}
