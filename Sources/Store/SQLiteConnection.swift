import CSQLite
import Foundation

/// One SQLite connection: a small, safe face over the C API (the GRDB idea, without the rest).
/// Not thread-safe: an owner (the `Store` actor, a CLI command) uses it from one place at a time.
public final class SQLiteConnection {
    let handle: OpaquePointer
    /// Keyed by the address of the SQL literal: hashing the SQL text on every insert costs
    /// more than the insert's own work on the ingest path.
    private var statementCache: [UnsafeRawPointer: SQLiteStatement] = [:]
    /// Statements composed at run time (a record's column list written once, see
    /// RecordColumns.swift), keyed by their text: hashed once per query, never per row.
    private var composedStatementCache: [String: SQLiteStatement] = [:]

    public init(path: String, readOnly: Bool = false) throws {
        var db: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let rc = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteError(resultCode: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5000)
    }

    deinit {
        statementCache.removeAll()
        composedStatementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs SQL without results (several statements allowed).
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(resultCode: rc, message: message)
        }
    }

    /// A prepared statement, cached: ingest runs the same few statements all day.
    public func statement(_ sql: StaticString) throws -> SQLiteStatement {
        let key = UnsafeRawPointer(sql.utf8Start)
        if let cached = statementCache[key] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql.description)
        statementCache[key] = statement
        return statement
    }

    /// A prepared statement for SQL built at run time, cached by its text. A label of its own,
    /// not an overload: a literal would pick `String` over `StaticString`, and move the ingest
    /// path's inserts onto the hashed cache.
    public func statement(sql: String) throws -> SQLiteStatement {
        if let cached = composedStatementCache[sql] {
            cached.reset()
            return cached
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        composedStatementCache[sql] = statement
        return statement
    }

    /// Runs `body` in one transaction (BEGIN IMMEDIATE): all of it is committed, or none.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // After SQLITE_FULL SQLite may already have rolled back; a second ROLLBACK is harmless.
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` on one snapshot of the file (a deferred read transaction): its reads agree
    /// with each other, and take the WAL's read lock once instead of once per statement.
    /// Inside a transaction already, `body` runs in that one.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try body() }
        _ = try statement("BEGIN").step()
        defer { _ = try? statement("COMMIT").step() }
        return try body()
    }

    /// Keeps the `-wal` and `-shm` files when this connection closes. SQLite deletes them by
    /// name on the last close; once the database file was deleted or replaced under a running
    /// agent, those names belong to the new file's connection.
    public func keepWALOnClose() {
        var persist: Int32 = 1
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
    }

    /// Stops the statement running on this connection (from any thread): it fails with
    /// SQLITE_INTERRUPT.
    public func interrupt() { sqlite3_interrupt(handle) }

    /// Whether a transaction is open (SQLite is out of autocommit mode).
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    public var changes: Int { Int(sqlite3_changes(handle)) }
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The single value of a one-row, one-column query (a PRAGMA, a count).
    public func scalarInt(_ sql: StaticString) throws -> Int64? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// Whether the file has the table `name` (one an older schema lacks, or a newer one dropped).
    func hasTable(_ name: String) throws -> Bool {
        let statement = try self.statement("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?").bind(.text(name))
        defer { statement.reset() }
        return try statement.step() && statement.int64(0) == 1
    }

    /// The single integer of a one-row query with parameters; nil without a row.
    func scalar(sql: String, _ values: SQLiteValue?...) throws -> Int64? {
        let statement = try self.statement(sql: sql).bind(values)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// Whether the statement finds a row; reset at once, so no cached statement holds a read
    /// snapshot past the commit (it would hold back checkpoints).
    public func exists(_ statement: SQLiteStatement) throws -> Bool {
        defer { statement.reset() }
        return try statement.step()
    }

    public func scalarText(_ sql: StaticString) throws -> String? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw SQLiteError(resultCode: rc, message: lastErrorMessage) }
    }
}
