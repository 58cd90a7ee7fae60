import CSQLite

/// A prepared statement: bind by 1-based index, step, read columns by 0-based index (or find
/// them by name once, with `layout`).
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    /// Found once per statement and kept as long as it is cached: its SQL, and so where its
    /// columns are, never changes (SQLite's own re-prepare after a schema change keeps an
    /// explicit column list in place).
    private var layouts: [ObjectIdentifier: any ColumnLayout] = [:]

    // SQLITE_TRANSIENT does not import into Swift: SQLite must copy the bytes we pass.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(connection: SQLiteConnection, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw SQLiteError(resultCode: rc, message: connection.lastErrorMessage)
        }
        self.handle = statement
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds values in order, starting at parameter 1; nil binds NULL.
    @discardableResult
    public func bind(_ values: SQLiteValue?...) throws -> SQLiteStatement {
        try bind(values)
    }

    @discardableResult
    public func bind(_ values: [SQLiteValue?]) throws -> SQLiteStatement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case nil: rc = sqlite3_bind_null(handle, index)
            case .integer(let int)?: rc = sqlite3_bind_int64(handle, index, int)
            case .real(let double)?: rc = sqlite3_bind_double(handle, index, double)
            case .text(let text)?: rc = sqlite3_bind_text(handle, index, text, -1, Self.transient)
            case .blob(let bytes)?:
                rc = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), Self.transient)
                }
            }
            try connection.check(rc)
        }
        return self
    }

    /// Advances to the next row; false when done.
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(resultCode: rc, message: connection.lastErrorMessage)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    public func run() throws {
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Where `Layout`'s columns are in this statement's results: found by name on first use,
    /// then a dictionary lookup per query; rows are read by index after that.
    func layout<Layout: ColumnLayout>(_ type: Layout.Type) throws -> Layout {
        let key = ObjectIdentifier(type)
        if let known = layouts[key] as? Layout { return known }
        let layout = try Layout(self)
        layouts[key] = layout
        return layout
    }

    /// The index of the leftmost result column named `name`, compared as SQLite compares names
    /// (ASCII case ignored). A missing column is a mistake in the SQL: it fails the query
    /// before its first row rather than read another column.
    func column(named name: String) throws -> Int32 {
        for index in 0..<sqlite3_column_count(handle) {
            if let columnName = sqlite3_column_name(handle, index), sqlite3_stricmp(columnName, name) == 0 { return index }
        }
        let sql = sqlite3_sql(handle).map { String(cString: $0) } ?? "?"
        throw SQLiteError(.error, message: "no result column \(name) in: \(sql)")
    }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    public func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }

    public func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: pointer)
    }

    public func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// The column's value as SQLite holds it (nil for NULL): for copying rows whatever their types.
    func value(_ column: Int32) -> SQLiteValue? {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(int64(column))
        case SQLITE_FLOAT: .real(double(column))
        case SQLITE_TEXT: .text(text(column))
        case SQLITE_BLOB: .blob(blob(column))
        default: nil
        }
    }

    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
