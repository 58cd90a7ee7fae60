import CSQLite

/// An error from SQLite, with its (extended) result code and message.
public struct SQLiteError: Error, CustomStringConvertible, Equatable {
    public let code: Int32
    public let message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code (`SQLITE_FULL`, `SQLITE_IOERR`, …) without the extended bits.
    public var primaryCode: Int32 { code & 0xFF }

    /// The file is not a database or is damaged.
    public var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public var description: String { "SQLite error \(code): \(message)" }
}
